export { BUNDLED_SCRIPTS, bundledScriptFile, isBundledScript, type BundledScript } from './bundled-scripts';
export { parseChatRequest, type ChatMessage, type ChatRequest } from './chat-request';
export { modelServerBanner } from './banner';
export { ModelServerListenError, startModelServer, type ModelServer, type ModelServerOptions } from './model-server';
export { openAIError, type OpenAIErrorBody } from './openai-error';
export type { ModelRequestRecord } from './request-log';
export {
  DEFAULT_SCRIPTED_MODEL,
  isModelScript,
  loadScriptFile,
  MAX_DELAY_MS,
  MESSAGE_ROLES,
  ModelScriptError,
  parseScript,
  type ContentCheck,
  type ModelScript,
  type ScriptConversation,
  type ScriptFailure,
  type ScriptJson,
  type ScriptResponse,
  type ScriptStep,
  type ScriptToolCall,
  type StepExpectation,
} from './script';
export { completionChunks, type PacedChunk, type StreamingOptions } from './sse-answer';
export { answerStep, routeRequest, type RefusedRequest, type RoutedRequest, type ScriptedAnswer } from './scripted-model';
