import type { Request } from 'express';

type Holder<T> = Request & { [key: symbol]: T | undefined };

/**
 * `req[name]` as a per-request value made on first read (and replaceable by assignment): an accessor defined
 * once on the app's request prototype, the first time one of its requests passes, instead of a property and
 * closures on every request. Returns the per-request step that makes sure the accessor is there.
 */
export function lazyRequestProperty<T>(name: string, make: (req: Request) => T): (req: Request) => void {
  const value = Symbol(name);
  const prototypes = new WeakSet<object>();
  return req => {
    const prototype = Object.getPrototypeOf(req) as object;
    if (prototypes.has(prototype)) return;
    prototypes.add(prototype);
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
  };
}
