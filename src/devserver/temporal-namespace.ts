import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SearchAttributeTypeName } from './dev-server';

/**
 * How many custom search attributes of each type one namespace can have on SQL visibility
 * (PostgreSQL, MySQL, SQLite) in Temporal 1.29: each type maps onto a fixed set of columns of
 * the `executions_visibility` table (`Keyword01`–`Keyword10`, `Int01`–`Int03`, …), so a registration
 * beyond these fails. Elasticsearch and Temporal Cloud allow more.
 */
export const SQL_SEARCH_ATTRIBUTE_LIMITS: Readonly<Record<SearchAttributeTypeName, number>> = Object.freeze({
  Keyword: 10,
  Text: 3,
  Int: 3,
  Double: 3,
  Bool: 3,
  Datetime: 3,
  KeywordList: 3,
});

/** Thrown when the namespace or a search attribute cannot be registered; the message names which and why. */
export class NamespaceRegistrationError extends Error {
  override readonly name = 'NamespaceRegistrationError';
}

/** What to register, and with which Temporal CLI. */
export interface NamespaceRegistration {
  /** The `temporal` binary (the pinned CLI). */
  cli: string;
  /** Frontend `host:port`. */
  address: string;
  namespace: string;
  /** How long closed workflows are kept. Defaults to 720h, as docker-compose.yml's namespace job. */
  retention?: string;
  /** Custom search attributes the namespace must have, by name; existing ones of the same type are kept. */
  searchAttributes: Readonly<Record<string, SearchAttributeTypeName>>;
}

/** What {@link registerNamespace} changed. */
export interface RegistrationResult {
  /** `true` when the namespace was created by this call. */
  createdNamespace: boolean;
  /** The search attributes this call added (the others already existed). */
  addedSearchAttributes: string[];
}

/**
 * Makes sure the namespace exists and has the given custom search attributes, with the same
 * `temporal operator` commands docker-compose.yml's namespace job runs: `namespace describe`,
 * `namespace create` when it is missing, `search-attribute list`, `search-attribute create` for
 * each missing attribute. Idempotent: a second call changes nothing.
 *
 * @throws {NamespaceRegistrationError} the server refused, an attribute exists with another type,
 * or more attributes of a type are asked for than SQL visibility has columns for.
 */
export async function registerNamespace(registration: NamespaceRegistration): Promise<RegistrationResult> {
  assertWithinSqlLimits(registration.searchAttributes);
  const { namespace } = registration;
  const cli = (args: string[]): Promise<CliResult> => runCli(registration.cli, [...args, '--address', registration.address]);

  let createdNamespace = false;
  const described = await cli(['operator', 'namespace', 'describe', '--namespace', namespace, '--output', 'json']);
  if (described.code !== 0) {
    if (!/not found/i.test(described.stderr)) throw failure(`describing namespace ${namespace}`, described);
    const created = await cli(['operator', 'namespace', 'create', '--namespace', namespace, '--retention', registration.retention ?? '720h']);
    if (created.code !== 0) throw failure(`creating namespace ${namespace}`, created);
    createdNamespace = true;
  }

  const wanted = Object.entries(registration.searchAttributes);
  const addedSearchAttributes: string[] = [];
  if (wanted.length === 0) return { createdNamespace, addedSearchAttributes };
  // A namespace just created on a SQL-backed server is unknown to the frontend until its
  // namespace registry refreshes (up to 10 s in 1.29), while the dev server knows it at once.
  const listed = await whileNamespaceUnknown(createdNamespace, () =>
    cli(['operator', 'search-attribute', 'list', '--namespace', namespace, '--output', 'json']),
  );
  if (listed.code !== 0) throw failure(`listing the search attributes of ${namespace}`, listed);
  const existing = (JSON.parse(listed.stdout) as { customAttributes?: Record<string, string> }).customAttributes ?? {};
  for (const [name, type] of wanted) {
    const current = existing[name];
    if (current === indexedValueType(type)) continue;
    if (current !== undefined) {
      throw new NamespaceRegistrationError(
        `search attribute ${name} of namespace ${namespace} already exists as ${current}, not ${type}; a search attribute's type cannot change: choose another name`,
      );
    }
    const created = await whileNamespaceUnknown(createdNamespace, () =>
      cli(['operator', 'search-attribute', 'create', '--namespace', namespace, '--name', name, '--type', type]),
    );
    if (created.code !== 0) throw failure(`creating search attribute ${name} (${type}) in ${namespace}`, created);
    addedSearchAttributes.push(name);
  }
  return { createdNamespace, addedSearchAttributes };
}

/** How long a namespace this call created may stay unknown to the frontend (its registry refreshes every 10 s). */
const NEW_NAMESPACE_PROPAGATION_MS = 30_000;

/**
 * Runs `command` again, every half second, while it fails because the namespace is not found —
 * only for a namespace this call has just created, which exists but may not have reached the
 * frontend's registry yet. Any other answer, or still "not found" after
 * {@link NEW_NAMESPACE_PROPAGATION_MS}, is returned as it is.
 */
async function whileNamespaceUnknown(justCreated: boolean, command: () => Promise<CliResult>): Promise<CliResult> {
  const deadline = Date.now() + NEW_NAMESPACE_PROPAGATION_MS;
  for (;;) {
    const result = await command();
    if (!justCreated || result.code === 0 || !/namespace .* is not found/i.test(result.stderr) || Date.now() > deadline) return result;
    await sleep(500);
  }
}

function assertWithinSqlLimits(attributes: Readonly<Record<string, SearchAttributeTypeName>>): void {
  const counts = new Map<SearchAttributeTypeName, number>();
  for (const type of Object.values(attributes)) counts.set(type, (counts.get(type) ?? 0) + 1);
  for (const [type, count] of counts) {
    const limit = SQL_SEARCH_ATTRIBUTE_LIMITS[type];
    if (limit === undefined) throw new NamespaceRegistrationError(`unknown search attribute type ${JSON.stringify(type)}`);
    if (count > limit) {
      throw new NamespaceRegistrationError(
        `${count} search attributes of type ${type} were asked for, but SQL visibility (PostgreSQL) has room for ${limit} per namespace`,
      );
    }
  }
}

/** `KeywordList` → `INDEXED_VALUE_TYPE_KEYWORD_LIST`, as `search-attribute list --output json` prints types. */
function indexedValueType(type: SearchAttributeTypeName): string {
  return `INDEXED_VALUE_TYPE_${type.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}`;
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(cli: string, args: string[]): Promise<CliResult> {
  // Only the address given here may decide where the CLI connects: no TEMPORAL_* variables (a
  // Temporal Cloud API key, TLS settings) and no profile file from the caller's environment.
  const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' };
  return new Promise((done) => {
    execFile(cli, [...args, '--disable-config-file', '--disable-config-env'], { env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      done({ code, stdout, stderr });
    });
  });
}

function failure(step: string, result: CliResult): NamespaceRegistrationError {
  const said = (result.stderr.trim() || result.stdout.trim()).split('\n').slice(-5).join(' ');
  return new NamespaceRegistrationError(`${step} failed (exit ${result.code ?? 'by a signal'}): ${said}`);
}
