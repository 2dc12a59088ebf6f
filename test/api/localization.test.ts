import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { api } from '../setup/hooks.js';
import { readCatalog } from '../../config/i18n.js';

const EN = 'No authentication provided';
const DE = 'Keine Authentifizierung angegeben';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

describe('Localization', () => {
  it('When nothing says otherwise, then English', async () => {
    const res = await api().get('/api/me').expect(401);
    expect(res.body.message).to.equal(EN);
  });

  it('When Accept-Language asks for German, then German', async () => {
    const res = await api().get('/api/me').set('Accept-Language', 'de-DE,de;q=0.9').expect(401);
    expect(res.body.message).to.equal(DE);
  });

  it('When the cookie says German, then it beats the header', async () => {
    const res = await api()
      .get('/api/me')
      .set('Cookie', 'STOCKROOM_LOCALE=de')
      .set('Accept-Language', 'en')
      .expect(401);
    expect(res.body.message).to.equal(DE);
  });

  it('When ?lang= is given, then it beats cookie and header', async () => {
    const en = await api()
      .get('/api/me?lang=en')
      .set('Cookie', 'STOCKROOM_LOCALE=de')
      .set('Accept-Language', 'de')
      .expect(401);
    expect(en.body.message).to.equal(EN);
    const de = await api()
      .get('/api/me?lang=de')
      .set('Cookie', 'STOCKROOM_LOCALE=en')
      .set('Accept-Language', 'en')
      .expect(401);
    expect(de.body.message).to.equal(DE);
  });

  it('When an unsupported language is asked for, then English', async () => {
    const res = await api().get('/api/me?lang=fr').set('Accept-Language', 'fr-FR').expect(401);
    expect(res.body.message).to.equal(EN);
  });

  it('When the catalogues are compared, then every key exists in both languages', () => {
    const en = Object.keys(readCatalog('en')).sort();
    const de = Object.keys(readCatalog('de')).sort();
    expect(
      en.filter(k => !de.includes(k)),
      'keys missing in German',
    ).to.deep.equal([]);
    expect(
      de.filter(k => !en.includes(k)),
      'keys missing in English',
    ).to.deep.equal([]);
    for (const key of en) expect(readCatalog('de')[key], key).to.be.a('string').and.not.equal('');
  });

  it('When the code names a message key, then the key exists', () => {
    const catalog = readCatalog('en');
    const roots = ['api', 'domain', 'workers', 'config'].map(d => path.resolve(d));
    const pattern =
      /['"`]((?:error|auth|inventory|supplier|product|validation|history|analytics|alert|admin)\.[a-z0-9.]+)['"`]/g;
    const missing = new Set<string>();
    for (const file of roots.flatMap(sourceFiles)) {
      for (const match of readFileSync(file, 'utf8').matchAll(pattern)) {
        const key = match[1];
        if (!key.endsWith('.') && !key.endsWith('.ts') && !key.endsWith('.js') && !(key in catalog))
          missing.add(`${key} (${path.relative('.', file)})`);
      }
    }
    expect([...missing]).to.deep.equal([]);
  });
});
