import { InvalidSettingError } from '../client/errors';
import { prepareUserTools, type PreparedUserTool, type UserTool } from '../../activities/user-tools';

/** The user's tools, checked, and where they came from. */
export interface LoadedUserTools {
  tools: PreparedUserTool[];
  source: string;
}

/**
 * Loads a tools module (`--tools ./tools.mjs`): its default export lists the tools (see
 * {@link UserTool}). ES modules and CommonJS both load; an ES module may not use top-level
 * `await` (it is loaded with `require`, as the compiled worker loads everything).
 *
 * @throws InvalidSettingError in one sentence naming the module and what is wrong: it does not
 *   load, it exports no list, or a tool is malformed.
 */
export async function loadToolModule(file: string): Promise<LoadedUserTools> {
  let loaded: { default?: unknown };
  try {
    loaded = (await import(file)) as { default?: unknown };
  } catch (error) {
    throw new InvalidSettingError(`the tools module ${file} could not be loaded: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  return prepared(loaded.default, file);
}

/** Tools given to `createWorker({ tools })` directly, checked as a module's would be. */
export function givenTools(tools: readonly UserTool[]): LoadedUserTools {
  return prepared([...tools], 'createWorker({ tools })');
}

function prepared(exported: unknown, source: string): LoadedUserTools {
  try {
    return { tools: prepareUserTools(exported, source), source };
  } catch (error) {
    throw new InvalidSettingError((error as Error).message);
  }
}
