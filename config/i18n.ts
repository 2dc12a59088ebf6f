import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import i18next, { type i18n } from 'i18next';
import { LanguageDetector } from 'i18next-http-middleware';

export const SUPPORTED_LANGUAGES = ['en', 'de'] as const;
export const LOCALE_COOKIE = 'STOCKROOM_LOCALE';
/** `locales/` of the repository, from the sources (`config/`) and from the compiled output (`dist/config/`). */
export const LOCALES_DIR = [new URL('../locales', import.meta.url), new URL('../../locales', import.meta.url)]
  .map(url => fileURLToPath(url))
  .find(dir => existsSync(path.join(dir, 'en')))!;

export function readCatalog(lng: string): Record<string, string> {
  const dir = path.join(LOCALES_DIR, lng);
  const merged: Record<string, string> = {};
  for (const file of readdirSync(dir)
    .filter(f => f.endsWith('.json'))
    .sort()) {
    Object.assign(merged, JSON.parse(readFileSync(path.join(dir, file), 'utf8')));
  }
  return merged;
}

/**
 * One i18next instance per app. Keys are flat (`error.not.found.supplier`), so the key separator is off.
 * Locale: `?lang=` -> cookie STOCKROOM_LOCALE -> Accept-Language -> en.
 */
export async function createI18n(): Promise<i18n> {
  const instance = i18next.createInstance();
  await instance.use(LanguageDetector).init({
    supportedLngs: [...SUPPORTED_LANGUAGES],
    load: 'languageOnly',
    nonExplicitSupportedLngs: true,
    fallbackLng: 'en',
    keySeparator: false,
    nsSeparator: false,
    resources: Object.fromEntries(SUPPORTED_LANGUAGES.map(l => [l, { translation: readCatalog(l) }])),
    detection: {
      order: ['querystring', 'cookie', 'header'],
      lookupQuerystring: 'lang',
      lookupCookie: LOCALE_COOKIE,
      caches: false,
    },
    interpolation: { escapeValue: false },
    returnNull: false,
  });
  return instance;
}
