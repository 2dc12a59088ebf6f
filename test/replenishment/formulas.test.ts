import { expect } from 'chai';
import cron from 'node-cron';
import { ConfigError, loadConfig } from '../../config/env.js';
import { replenishmentSchedule } from '../../workers/clock.js';
import { normalQuantile, serviceLevelZ } from '../../domain/replenishment/normal-quantile.js';
import {
  computedLevels,
  dayDemand,
  demandWindow,
  suggest,
  windowLength,
} from '../../domain/replenishment/replenishment-formulas.js';

describe('Replenishment formulas (pure)', () => {
  it('When z is taken for a service level, then it is the normal quantile rounded to 4 decimals', () => {
    const table: [number, number][] = [
      [0.5, 0],
      [0.8, 0.8416],
      [0.9, 1.2816],
      [0.95, 1.6449],
      [0.975, 1.96],
      [0.99, 2.3263],
      [0.995, 2.5758],
      [0.999, 3.0902],
    ];
    for (const [p, z] of table) expect(serviceLevelZ(p), String(p)).to.equal(z);
    // Symmetric and accurate in both tails (reference values of the standard normal quantile).
    expect(normalQuantile(0.025)).to.be.closeTo(-1.959963984540054, 1e-14);
    expect(normalQuantile(1e-10)).to.be.closeTo(-6.361340902404056, 1e-12);
  });

  it("When the contract's worked example is computed, then every figure is the contract's", () => {
    const today = '2026-11-28';
    const window = demandWindow([0, 0, 0, 0, 0, 0, 10]);
    expect(windowLength(today, today, 56)).to.equal(7);
    const levels = computedLevels(window, 7, serviceLevelZ(0.95), 14);
    expect(levels.dailyDemand.toFixed(4)).to.equal('1.4286');
    expect(levels.demandStdDev.toFixed(4)).to.equal('3.4993');
    const item = {
      quantity: 20,
      onOrderQuantity: 0,
      minimumQuantity: 0,
      ownReorderPoint: null,
      ownOrderUpToQuantity: null,
    };
    expect(suggest(window, levels, item, 7, today)).to.deep.equal({
      inventoryPosition: 20,
      reorderPoint: 26,
      orderUpToQuantity: 46,
      suggestedQuantity: 26,
      daysOfCover: 14,
      projectedStockoutDate: '2026-12-12',
      orderByDate: '2026-12-05',
    });
  });

  it('When a day has sales, reversals and other reasons, then only the demand reasons count, never below 0', () => {
    expect(dayDemand([{ reason: 'SALE', increase: 5, decrease: 5 }])).to.equal(0);
    expect(dayDemand([{ reason: 'SALE', increase: 9, decrease: 2 }])).to.equal(0);
    expect(
      dayDemand([
        { reason: 'SALE', increase: 1, decrease: 6 },
        { reason: 'LOST', increase: 0, decrease: 2 },
        { reason: 'RETURN', increase: 4, decrease: 0 },
        { reason: 'MANUAL_ADJUSTMENT', increase: 0, decrease: 9 },
        { reason: 'INVENTORY_COUNT', increase: 0, decrease: 9 },
      ]),
    ).to.equal(7);
  });

  it('When an item is young, then its window runs from its creation day, at least 7 and at most the setting', () => {
    expect(windowLength('2026-11-28', '2026-11-28', 56)).to.equal(7);
    expect(windowLength('2026-11-10', '2026-11-28', 56)).to.equal(19);
    expect(windowLength('2025-01-01', '2026-11-28', 56)).to.equal(56);
  });

  it('When the REPLENISHMENT_* settings are read, then defaults apply and bad values name their variable', () => {
    const env = { NODE_ENV: 'test' };
    expect(loadConfig(env).replenishment).to.deep.equal({
      demandDays: 56,
      defaultLeadDays: 7,
      serviceLevel: 0.95,
      coverDays: 14,
      cron: '30 3 * * *',
    });
    const bad: [string, string][] = [
      ['REPLENISHMENT_DEMAND_DAYS', '6'],
      ['REPLENISHMENT_DEFAULT_LEAD_DAYS', '366'],
      ['REPLENISHMENT_SERVICE_LEVEL', '0.9995'],
      ['REPLENISHMENT_SERVICE_LEVEL', '0.4'],
      ['REPLENISHMENT_COVER_DAYS', '0'],
      ['REPLENISHMENT_CRON', 'every night'],
      ['REPLENISHMENT_CRON', '0 30 3 * * *'],
    ];
    for (const [variable, value] of bad) {
      const attempt = () => loadConfig({ ...env, [variable]: value });
      expect(attempt, `${variable}=${value}`).to.throw(ConfigError, variable);
    }
    const schedule = replenishmentSchedule(loadConfig({ ...env, REPLENISHMENT_CRON: '0 4 * * 1-5' }));
    expect(schedule).to.include({ cron: '0 4 * * 1-5', queue: 'replenishment' });
    expect(cron.validate(schedule.cron)).to.equal(true);
    expect(schedule.jobId(new Date('2026-11-28T04:00:05Z'))).to.equal('replenishment-2026-11-28T04-00');
  });
});
