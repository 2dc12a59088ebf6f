/**
 * `npm start` and the Procfile's `web` and `worker` lines (start-roles.ts): the Node.js version is checked first,
 * before any module of the application is loaded (supported-node.ts).
 */
import './supported-node.js';

await import('./start-roles.js');
