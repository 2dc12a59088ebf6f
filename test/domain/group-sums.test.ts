import { expect } from 'chai';
import fc from 'fast-check';
import { GroupSums } from '../../domain/analytics/rebuild/group-sums.js';

describe('GroupSums (the report rebuild’s sums per group)', () => {
  it('When integers of any size are added per group and field, then every sum equals the exact bigint sum', () => {
    const value = fc.oneof(
      fc.integer({ min: -1000, max: 1000 }),
      fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 52),
      fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -3, max: 40 }), fc.nat({ max: 2 }), value), { maxLength: 400 }),
        adds => {
          const sums = new GroupSums(3);
          const exact = new Map<string, bigint>();
          for (const [key, field, v] of adds) {
            sums.add(sums.group(key * 2 ** 30), field, v);
            const k = `${key}/${field}`;
            exact.set(k, (exact.get(k) ?? 0n) + BigInt(v));
          }
          for (let group = 0; group < sums.size; group++)
            for (let field = 0; field < 3; field++) {
              const key = sums.keys[group] / 2 ** 30;
              expect(BigInt(sums.get(group, field))).to.equal(exact.get(`${key}/${field}`) ?? 0n);
              if (typeof sums.get(group, field) === 'bigint')
                expect(sums.get(group, field)).to.satisfy(
                  (s: bigint) => s > BigInt(Number.MAX_SAFE_INTEGER) || s < -BigInt(Number.MAX_SAFE_INTEGER),
                );
            }
        },
      ),
      { numRuns: 300 },
    );
  });
});
