const PREFIX = "Q-";
/** Five digits keep early refs sortable as text; later numbers simply grow longer. */
const DIGITS = 5;

/**
 * A quote's human-readable ref from its number (`42` → `Q-00042`, `123456` → `Q-123456`), as
 * an SQL expression over an integer expression: the statement that numbers a quote also inserts
 * it, so the ref is written there.
 */
export function quoteRefSql(number: string): string {
  return `'${PREFIX}' || lpad((${number})::text, greatest(${DIGITS}, length((${number})::text)), '0')`;
}
