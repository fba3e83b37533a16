import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SearchAttributeTypeName } from './dev-server';

/**
 * How many custom search attributes of each type one namespace can have on SQL visibility
 * (PostgreSQL, MySQL, SQLite) in Temporal 1.29 to 1.32: each type maps onto a fixed set of columns of
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

/** What to register, and where. */
export interface NamespaceRegistration {
  /** Frontend `host:port`. */
  address: string;
  namespace: string;
  /** How long closed workflows are kept, in days. Defaults to 30 (720h), as docker-compose.yml's namespace job. */
  retentionDays?: number;
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
 * Makes sure the namespace exists and has the given custom search attributes, over the
 * frontend's gRPC API (what `temporal operator namespace create` and `search-attribute create`
 * call): `DescribeNamespace`, `RegisterNamespace` when it is missing, `ListSearchAttributes`,
 * `AddSearchAttributes` for the missing ones. Idempotent: a second call changes nothing. Needs
 * no Temporal CLI.
 *
 * @throws {NamespaceRegistrationError} the server refused, an attribute exists with another type,
 * or more attributes of a type are asked for than SQL visibility has columns for.
 */
export async function registerNamespace(registration: NamespaceRegistration): Promise<RegistrationResult> {
  assertWithinSqlLimits(registration.searchAttributes);
  const { namespace } = registration;
  const connection = await Connection.connect({ address: registration.address, connectTimeout: 10_000 });
  try {
    const call = async <T>(step: string, run: () => Promise<T>): Promise<T> => {
      try {
        return await run();
      } catch (error) {
        throw new NamespaceRegistrationError(`${step} failed: ${(error as Error).message}`);
      }
    };
    let createdNamespace = false;
    try {
      await connection.workflowService.describeNamespace({ namespace });
    } catch (error) {
      if ((error as { code?: number }).code !== GRPC_NOT_FOUND) throw new NamespaceRegistrationError(`describing namespace ${namespace} failed: ${(error as Error).message}`);
      await call(`creating namespace ${namespace}`, () =>
        connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(`${registration.retentionDays ?? 30} days`) }),
      );
      createdNamespace = true;
    }

    const wanted = Object.entries(registration.searchAttributes);
    const addedSearchAttributes: string[] = [];
    if (wanted.length === 0) return { createdNamespace, addedSearchAttributes };
    // A namespace just created on a SQL-backed server is unknown to the frontend until its
    // namespace registry refreshes (up to 10 s), so those calls are repeated while it is.
    const listed = await call(`listing the search attributes of ${namespace}`, () =>
      whileNamespaceUnknown(createdNamespace, () => connection.operatorService.listSearchAttributes({ namespace })),
    );
    const existing = listed.customAttributes ?? {};
    const missing: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
    for (const [name, type] of wanted) {
      const current = existing[name];
      if (current === INDEXED_VALUE_TYPE[type]) continue;
      if (current !== undefined) {
        throw new NamespaceRegistrationError(
          `search attribute ${name} of namespace ${namespace} already exists as ${temporal.api.enums.v1.IndexedValueType[current]}, not ${type}; a search attribute's type cannot change: choose another name`,
        );
      }
      missing[name] = INDEXED_VALUE_TYPE[type];
      addedSearchAttributes.push(name);
    }
    if (addedSearchAttributes.length > 0) {
      await call(`creating search attributes ${addedSearchAttributes.join(', ')} in ${namespace}`, () =>
        whileNamespaceUnknown(createdNamespace, () => connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing })),
      );
    }
    return { createdNamespace, addedSearchAttributes };
  } finally {
    await connection.close();
  }
}

const GRPC_NOT_FOUND = 5;

const INDEXED_VALUE_TYPE: Readonly<Record<SearchAttributeTypeName, temporal.api.enums.v1.IndexedValueType>> = {
  Keyword: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Text: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  Int: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  Bool: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  Datetime: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KeywordList: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/** How long a namespace this call created may stay unknown to the frontend (its registry refreshes every 10 s). */
const NEW_NAMESPACE_PROPAGATION_MS = 30_000;

/**
 * Runs `command` again, every half second, while it fails because the namespace is not found —
 * only for a namespace this call has just created, which exists but may not have reached the
 * frontend's registry yet.
 */
async function whileNamespaceUnknown<T>(justCreated: boolean, command: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + NEW_NAMESPACE_PROPAGATION_MS;
  for (;;) {
    try {
      return await command();
    } catch (error) {
      const unknown = (error as { code?: number }).code === GRPC_NOT_FOUND || /namespace .* is not found/i.test((error as Error).message);
      if (!justCreated || !unknown || Date.now() > deadline) throw error;
      await sleep(500);
    }
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

