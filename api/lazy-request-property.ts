import type { Request } from 'express';

type Holder<T> = Request & { [key: symbol]: T | undefined };

/**
 * `req[name]` as a per-request value made on first read (and replaceable by assignment): ONE accessor on the
 * app's request prototype (`app.request`, which Express makes the prototype of every request it handles),
 * defined at start, instead of a property and closures on every request, or a middleware step per request.
 */
export function defineLazyRequestProperty<T>(
  prototype: object,
  name: string,
  make: (req: Request) => T,
): void {
  const value = Symbol(name);
  Object.defineProperty(prototype, name, {
    configurable: true,
    enumerable: false,
    get(this: Holder<T>) {
      return (this[value] ??= make(this));
    },
    set(this: Holder<T>, replacement: T) {
      this[value] = replacement;
    },
  });
}
