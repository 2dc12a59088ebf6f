import { expect } from 'chai';
import { centsToNumber, hasAtMostTwoDecimals, toCents } from '../../domain/shared/money.js';

describe('Money', () => {
  it('When amounts have at most two decimals, then they convert to exact cents', () => {
    expect(toCents(0.1)).to.equal(10);
    expect(toCents(19.99)).to.equal(1999);
    expect(toCents(123456789.12)).to.equal(12345678912);
    expect(centsToNumber(toCents(0.1) + toCents(0.2))).to.equal(0.3);
  });

  it('When amounts have more decimals or are not finite, then they are rejected', () => {
    for (const v of [0.001, 1.234, Number.NaN, Number.POSITIVE_INFINITY, 1e-7]) {
      expect(hasAtMostTwoDecimals(v), String(v)).to.equal(false);
    }
    for (const v of [0.01, 1, 2.5, 999999.99]) expect(hasAtMostTwoDecimals(v), String(v)).to.equal(true);
    expect(() => toCents(0.001)).to.throw(RangeError);
  });
});
