import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config/env.js';
import { closeServices, openServices } from '../config/services.js';
import { createApp } from '../api/app.js';
import { CLIENT_TYPES_PATH, clientTypes } from '../client/generate-client.js';

/** `npm run client:generate`: writes client/stockroom-api.ts from the OpenAPI document of this code. */
const services = await openServices(loadConfig());
try {
  await writeFile(CLIENT_TYPES_PATH, await clientTypes(createApp(services).openapi));
  console.log(`wrote ${fileURLToPath(CLIENT_TYPES_PATH)}`);
} finally {
  await closeServices(services);
}
