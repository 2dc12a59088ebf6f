/**
 * The Procfile's `release` line (migrate-database.ts): the Node.js version is checked first, before any module
 * of the application is loaded (supported-node.ts).
 */
import './supported-node.js';

await import('./migrate-database.js');
