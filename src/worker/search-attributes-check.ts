import type { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { InvalidSettingError } from '../client/errors';
import { SESSION_SEARCH_ATTRIBUTES } from '../session';

const INDEXED_TYPE: Record<string, number> = {
  Keyword: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  Datetime: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  Bool: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  KeywordList: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/**
 * Checks that the namespace declares the search attributes sessions index themselves with
 * ({@link SESSION_SEARCH_ATTRIBUTES}). A session whose upsert names an undeclared attribute
 * fails its workflow task, so a worker refuses to start rather than break every session.
 *
 * @throws InvalidSettingError naming each missing (or mistyped) attribute and the commands that add it.
 */
export async function assertSessionSearchAttributes(connection: NativeConnection, namespace: string): Promise<void> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const found = customAttributes ?? {};
  const missing = Object.entries(SESSION_SEARCH_ATTRIBUTES).filter(([name, type]) => found[name] !== INDEXED_TYPE[type]);
  if (missing.length === 0) return;
  const wrong = missing.filter(([name]) => found[name] !== undefined).map(([name]) => name);
  throw new InvalidSettingError(
    `namespace ${namespace} lacks the search attributes sessions index themselves with: ` +
      `${missing.map(([name, type]) => `${name} (${type})`).join(', ')}${wrong.length > 0 ? ` — ${wrong.join(', ')} exist with another type` : ''}. ` +
      `Add them: ${missing.map(([name, type]) => `temporal operator search-attribute create --namespace ${namespace} --name ${name} --type ${type}`).join('; ')}. ` +
      '(`agent-sessions dev` and `agent-sessions cluster` declare them; docker-compose.yml registers them in its namespace job.)',
  );
}
