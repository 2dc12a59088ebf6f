import { readFile, writeFile } from 'node:fs/promises';
import { withSettingsReference } from '../config/settings-reference.js';

/** `npm run docs:config`: rewrites the configuration table of docs/operations.md from config/env.ts. */
const page = new URL('../docs/operations.md', import.meta.url);
await writeFile(page, withSettingsReference(await readFile(page, 'utf8')));
console.log('docs/operations.md: configuration reference updated');
