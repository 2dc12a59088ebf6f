import { expect } from 'chai';
import {
  centsToNumber,
  centsToText,
  hasAtMostTwoDecimals,
  moneyText,
  toCents,
  totalValueOf,
} from '../../domain/shared/money.js';

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

  it('When amounts are written as numeric text or multiplied by a count, then exactly (no float product)', () => {
    expect([0, 5, 1230, 100, -5].map(c => centsToText(c))).to.deep.equal([
      '0.00',
      '0.05',
      '12.30',
      '1.00',
      '-0.05',
    ]);
    expect(moneyText(12.3)).to.equal('12.30');
    expect(moneyText(9999999.99)).to.equal('9999999.99');
    expect(totalValueOf('0.10', 3)).to.equal(0.3);
    expect(totalValueOf('9999999.99', 999999)).to.equal(9999989990000.01);
    expect(totalValueOf('12.3', 0)).to.equal(0);
  });
});
