/** Human-readable quote number: `Q-00042`; five digits keep early refs sortable as text. */
export function formatQuoteRef(number: number): string {
  return `Q-${String(number).padStart(5, "0")}`;
}
