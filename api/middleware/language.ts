import type { NextFunction, Request, Response } from 'express';
import type { i18n, TFunction } from 'i18next';

/**
 * Resolves the request language with i18next-http-middleware's LanguageDetector (`?lang=` -> cookie
 * STOCKROOM_LOCALE -> Accept-Language -> en, configured in config/i18n.ts) and attaches a translator fixed to
 * it. Unlike the package's `handle()`, it does not clone the i18next instance per request (that clone was
 * the largest CPU cost of a request); one fixed `t` per supported language is created once and reused.
 */
export function language(instance: i18n) {
  const translators = new Map<string, TFunction>();
  const fallback = 'en';
  return (req: Request, res: Response, next: NextFunction) => {
    // Nothing to detect from (no ?lang=, no cookie, no Accept-Language): the fallback, without the detector.
    // A URL that spells neither `lang` nor any escape cannot carry the key, so its query string is not parsed
    // for this (the parser decodes keys: `l%61ng` is `lang` too).
    const url = req.originalUrl;
    const silent =
      req.headers.cookie === undefined &&
      req.headers['accept-language'] === undefined &&
      ((!url.includes('lang') && !url.includes('%')) || req.query.lang === undefined);
    const detected = silent
      ? undefined
      : (instance.services.languageDetector?.detect(req, res) as string | string[] | undefined);
    const codes = (Array.isArray(detected) ? detected : detected ? [detected] : []).filter(Boolean);
    const lng =
      (codes.length > 0 && instance.services.languageUtils.getBestMatchFromCodes(codes)) || fallback;
    let t = translators.get(lng);
    if (!t) {
      t = instance.getFixedT(lng);
      translators.set(lng, t);
    }
    req.language = lng;
    req.i18n = instance;
    req.t = t;
    res.setHeader('Content-Language', lng);
    next();
  };
}
