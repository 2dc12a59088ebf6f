/**
 * Spreadsheet formula injection (OWASP "CSV Injection"): a text cell starting with `=`, `+`, `-`, `@`, tab or
 * CR is run as a formula by spreadsheet programs, so exports prefix it with `'`. A cell that itself starts
 * with `'` gets one more, so that imports can drop exactly one `'` before either kind: every exported value
 * imports back unchanged, and a hand-written `'text` stays as it is.
 */
const ESCAPED_START = /^['=+\-@\t\r]/;

export const neutraliseFormula = (text: string): string => (ESCAPED_START.test(text) ? `'${text}` : text);

export const restoreFormula = (text: string): string =>
  text.startsWith("'") && ESCAPED_START.test(text.slice(1)) ? text.slice(1) : text;

/** One column of a CSV export: its header and the view property it shows. */
export interface CsvColumn<T> {
  header: string;
  key: keyof T & string;
}

/** The field separators an export may use (`;` for spreadsheet locales with a decimal comma). */
export const CSV_DELIMITERS = [',', ';'] as const;
