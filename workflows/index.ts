export { agentSession, releaseCheck } from './session';
export { forkPoint } from './fork-point';
