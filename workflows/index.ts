export { agentSession, releaseCheck } from './session';
export { sessionStream } from './session-stream';
