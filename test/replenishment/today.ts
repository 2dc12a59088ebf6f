export { addDays } from '../../domain/replenishment/replenishment-formulas.js';

/** Today's UTC date as the server takes it (`YYYY-MM-DD`). */
export const utcTodayForTests = (): string => new Date().toISOString().slice(0, 10);
