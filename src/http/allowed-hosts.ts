import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { InvalidSettingError } from '../client/errors';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * The `Host` names this service answers to. A page on another site can point its own name at
 * 127.0.0.1 (DNS rebinding) and then read the API as if it were same-origin; its requests still
 * carry that name in `Host`, so a service that answers only its own names cannot be read that way.
 *
 * Accepted: the address the server is bound to with its port; with a loopback bind, also
 * `localhost`, `127.0.0.1` and `[::1]` with that port; with a wildcard bind (`0.0.0.0`, `::`),
 * every address of the machine's interfaces and the loopback names with that port; and every
 * configured name (`AGENT_SESSIONS_ALLOWED_HOSTS`): `name` accepts that name on any port (a
 * proxy in front usually forwards it without one), `name:port` only on that port.
 */
export class AllowedHosts {
  private readonly anyPort = new Set<string>();
  private readonly exact = new Set<string>();
  private bound: string[] = [];

  /**
   * @throws InvalidSettingError when a configured name is not `host` or `host:port`.
   */
  constructor(configured: readonly string[] = []) {
    for (const entry of configured) {
      const parsed = parseHost(entry.trim());
      if (parsed === undefined || parsed.name === '') {
        throw new InvalidSettingError(
          `AGENT_SESSIONS_ALLOWED_HOSTS: ${JSON.stringify(entry)} is not a host name: give comma-separated "host" or "host:port" entries, e.g. agents.example.com,localhost:9090`,
        );
      }
      if (parsed.port === undefined) this.anyPort.add(parsed.name);
      else this.exact.add(`${parsed.name}:${parsed.port}`);
    }
  }

  /** Adds the names of the address the server now listens on. Called once it is listening. */
  listeningOn(address: AddressInfo): void {
    const host = bracketed(address.address.toLowerCase());
    const names = new Set([host]);
    if (WILDCARDS.has(host)) {
      // Listening on every interface: any of the machine's own addresses reaches it, and so do
      // the loopback names (compose's healthcheck calls http://127.0.0.1:8080 inside the container).
      for (const list of Object.values(networkInterfaces())) for (const net of list ?? []) names.add(bracketed(net.address.toLowerCase()));
      for (const name of LOOPBACK_NAMES) names.add(name);
    } else if (isLoopback(host)) {
      for (const name of LOOPBACK_NAMES) names.add(name);
    }
    this.bound = [...names].map((name) => `${name}:${address.port}`);
  }

  /** Whether a request whose `Host` header is `header` is meant for this service. */
  accepts(header: string | undefined): boolean {
    if (header === undefined) return false;
    const parsed = parseHost(header.trim());
    if (parsed === undefined) return false;
    if (this.anyPort.has(parsed.name)) return true;
    const withPort = `${parsed.name}:${parsed.port ?? 80}`;
    return this.exact.has(withPort) || this.bound.includes(withPort);
  }

  /** The accepted names, for the sentence of a refusal. */
  describe(): string {
    return [...this.bound, ...this.exact, ...[...this.anyPort].map((name) => `${name} (any port)`)].join(', ');
  }
}

/** `name[:port]` with the name lowercased and an IPv6 address kept in brackets. */
function parseHost(value: string): { name: string; port: number | undefined } | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[^\s:[\]/@]*)(?::(\d{1,5}))?$/i.exec(value);
  if (match === null) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && port > 65535) return undefined;
  return { name: match[1]!.toLowerCase(), port };
}

function bracketed(address: string): string {
  return address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
