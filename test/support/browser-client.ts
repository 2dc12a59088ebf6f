/** A cookie as the jar keeps it. */
interface StoredCookie {
  value: string;
}

export interface Hop {
  method: string;
  url: string;
  status: number;
}

/**
 * A small browser stand-in over `fetch(..., { redirect: 'manual' })` (supertest cannot follow redirects across
 * two servers): cookies are kept per host name like a browser (ports share cookies), redirects are followed
 * while they stay on reachable origins, and HTML forms are submitted with their hidden fields.
 */
export class BrowserClient {
  private readonly jar = new Map<string, Map<string, StoredCookie>>();
  /** Every Set-Cookie header received, newest last. */
  readonly setCookies: string[] = [];
  readonly trail: Hop[] = [];

  constructor(
    /** Origins the client may talk to; a redirect elsewhere ends `follow` (e.g. the front end). */
    public reachable: string[],
    /** Extra request headers per origin (e.g. `X-Forwarded-Proto: https` for the app behind a proxy). */
    private readonly headersFor: Record<string, Record<string, string>> = {},
  ) {}

  cookie(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name)?.value;
  }

  setCookie(host: string, name: string, value: string): void {
    const cookies = this.jar.get(host) ?? new Map<string, StoredCookie>();
    cookies.set(name, { value });
    this.jar.set(host, cookies);
  }

  deleteCookie(host: string, name: string): void {
    this.jar.get(host)?.delete(name);
  }

  private store(url: URL, headers: Headers): void {
    for (const raw of headers.getSetCookie()) {
      this.setCookies.push(raw);
      const [pair, ...attributes] = raw.split(';').map(s => s.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const expired = attributes.some(a => {
        const [key, val = ''] = a.split('=');
        if (key.toLowerCase() === 'max-age') return Number(val) <= 0;
        if (key.toLowerCase() === 'expires') return new Date(val).getTime() <= Date.now();
        return false;
      });
      if (expired) this.deleteCookie(url.hostname, name);
      else this.setCookie(url.hostname, name, value);
    }
  }

  /** One request, no redirect following; cookies in and out. */
  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const headers = new Headers(init.headers);
    const cookies = this.jar.get(target.hostname);
    if (cookies && cookies.size > 0 && !headers.has('cookie'))
      headers.set('cookie', [...cookies].map(([n, c]) => `${n}=${c.value}`).join('; '));
    for (const [name, value] of Object.entries(this.headersFor[target.origin] ?? {}))
      if (!headers.has(name)) headers.set(name, value);
    const res = await fetch(target, { ...init, headers, redirect: 'manual' });
    this.store(target, res.headers);
    this.trail.push({ method: init.method ?? 'GET', url, status: res.status });
    return res;
  }

  /**
   * Requests and follows redirects while they stay on reachable origins. Returns the last response and the
   * URL it came from, or `leftTo` when a redirect pointed outside (not fetched).
   */
  async follow(
    url: string,
    init: RequestInit = {},
  ): Promise<{ res: Response; url: string; leftTo?: string }> {
    let current = url;
    let options = init;
    for (let hop = 0; hop < 20; hop += 1) {
      const res = await this.request(current, options);
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) return { res, url: current };
      const next = new URL(location, current).href;
      await res.arrayBuffer();
      if (!this.reachable.includes(new URL(next).origin)) return { res, url: current, leftTo: next };
      current = next;
      options = res.status === 307 || res.status === 308 ? options : {};
    }
    throw new Error('too many redirects');
  }

  /** Submits the first form of a page with its hidden inputs plus `fields`, following redirects. */
  async submitForm(html: string, pageUrl: string, fields: Record<string, string> = {}) {
    const form = /<form[^>]*>[\s\S]*?<\/form>/i.exec(html)?.[0];
    if (!form) throw new Error(`no form on ${pageUrl}:\n${html.slice(0, 500)}`);
    const action = /action="([^"]*)"/i.exec(form)?.[1] ?? pageUrl;
    const values: Record<string, string> = {};
    for (const input of form.matchAll(/<input[^>]*>/gi)) {
      const name = /name="([^"]*)"/i.exec(input[0])?.[1];
      const value = /value="([^"]*)"/i.exec(input[0])?.[1] ?? '';
      if (name && /type="hidden"/i.test(input[0])) values[name] = value;
    }
    return this.follow(new URL(action.replaceAll('&amp;', '&'), pageUrl).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...values, ...fields }).toString(),
    });
  }
}
