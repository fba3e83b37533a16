export { agentSession } from './session';
