import { testApp } from '../setup/hooks.js';
import { writeFileSync } from 'node:fs';
describe('dump', () => { it('dump', () => { writeFileSync('/tmp/sec/openapi.json', JSON.stringify(testApp().openapi, null, 1)); }); });
