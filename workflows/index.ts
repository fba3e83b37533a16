export { agentSession, releaseCheck } from './session';
