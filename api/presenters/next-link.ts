import type { Request, Response } from 'express';

/**
 * `Link: <next page>; rel="next"` when a page has a successor: the request's own path and parameters (filters,
 * sort) with `page` dropped, the page's `size` (also when the request took the default) and the successor's
 * `cursor`.
 */
export function setNextLink(req: Request, res: Response, cursor: string | undefined, size: number): void {
  if (cursor === undefined) return;
  const url = new URL(req.originalUrl, 'http://host');
  url.searchParams.delete('page');
  url.searchParams.set('size', String(size));
  url.searchParams.set('cursor', cursor);
  res.set('Link', `<${url.pathname}${url.search}>; rel="next"`);
}
