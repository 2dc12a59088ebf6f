/**
 * Spreadsheet formula injection (OWASP "CSV Injection"): a text cell starting with `=`, `+`, `-`, `@`, tab or
 * CR is run as a formula by spreadsheet programs, so exports prefix it with `'`. Imports drop that one `'`
 * again, so an exported file imports back unchanged.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export const neutraliseFormula = (text: string): string => (FORMULA_START.test(text) ? `'${text}` : text);

export const restoreFormula = (text: string): string =>
  text.startsWith("'") && FORMULA_START.test(text.slice(1)) ? text.slice(1) : text;

/** One column of a CSV export: its header and the view property it shows. */
export interface CsvColumn<T> {
  header: string;
  key: keyof T & string;
}

/** The field separators an export may use (`;` for spreadsheet locales with a decimal comma). */
export const CSV_DELIMITERS = [',', ';'] as const;
