/**
 * The sizes of the scale bench (issue 32): ×1, ×3 and ×10 of one organisation's data, beside a
 * crowd of other organisations seeded once, each size scaled by `BENCH_SCALE_FACTOR` (1 unless
 * set) so that the whole bench can be tried in a minute at 0.01.
 */

/** The multiples the issue measures at, in the order the database grows through them. */
export const MULTIPLES = [1, 3, 10] as const;
export type Multiple = typeof MULTIPLES[number];

/** Variants per catalogue item: 2 colours × 5 sizes. */
export const VARIANTS_PER_ITEM = 10;
/** Ledger rows each variant but the long-ledger one is seeded with. */
export const LEDGER_ROWS_PER_VARIANT = 9;
/** Quotes of each other organisation (the "1,000 other organisations of 100 quotes"). */
export const QUOTES_PER_OTHER_ORGANIZATION = 100;

/** What one organisation holds at one size (and the crowd beside it, which does not grow). */
export interface ScaleSize {
  multiple: number;
  /** Full quotes (3 groups × 4 lines × 5 variants + 2 decorations per group) of the shop. */
  quotes: number;
  /** Customers, each with 1–2 contacts, tags and two custom-field values. */
  customers: number;
  vendors: number;
  tasks: number;
  /** Proofs, each with its first revision. */
  proofs: number;
  catalogueItems: number;
  /** catalogueItems × VARIANTS_PER_ITEM. */
  variants: number;
  /** Stock ledger rows of the shop; the long-ledger variant holds what the others do not. */
  ledgerRows: number;
  /** Delivered webhook events of one subscription (with their events and one attempt each). */
  deliveries: number;
  /** Other organisations, seeded once, each with QUOTES_PER_OTHER_ORGANIZATION full quotes. */
  otherOrganizations: number;
  /** Customers (the oldest) the bulk tier change targets: 10,000 at every size. */
  tierBlock: number;
}

/** `BENCH_SCALE_FACTOR`: every size times this (1 unless set), e.g. 0.01 to iterate quickly. */
export function scaleFactor(env: string | undefined = Deno.env.get("BENCH_SCALE_FACTOR")): number {
  const factor = Number(env ?? 1);
  if (!Number.isFinite(factor) || factor <= 0 || factor > 1) {
    throw new Error(`BENCH_SCALE_FACTOR must be a number in (0, 1], not ${env}`);
  }
  return factor;
}

/** The sizes at `multiple` (×1, ×3, ×10) shrunk by `factor`; every count at least 1. */
export function sizeAt(multiple: number, factor: number): ScaleSize {
  const scaled = (n: number): number => Math.max(1, Math.round(n * factor));
  const catalogueItems = scaled(1_000 * multiple);
  const variants = catalogueItems * VARIANTS_PER_ITEM;
  return {
    multiple,
    quotes: scaled(10_000 * multiple),
    customers: scaled(10_000 * multiple),
    vendors: scaled(1_000 * multiple),
    tasks: scaled(10_000 * multiple),
    proofs: scaled(10_000 * multiple),
    catalogueItems,
    variants,
    // At least one row for the long ledger beyond the other variants' own.
    ledgerRows: Math.max(
      scaled(100_000 * multiple),
      LEDGER_ROWS_PER_VARIANT * (variants - 1) + 1,
    ),
    deliveries: scaled(10_000 * multiple),
    otherOrganizations: scaled(1_000),
    tierBlock: scaled(10_000),
  };
}

/** The long-ledger variant's rows at a size: the ledger less the other variants' rows. */
export function longLedgerRows(size: ScaleSize): number {
  return size.ledgerRows - LEDGER_ROWS_PER_VARIANT * (size.variants - 1);
}

/** Nothing seeded yet: the size the first seed grows from. */
export function emptySize(): ScaleSize {
  return {
    multiple: 0,
    quotes: 0,
    customers: 0,
    vendors: 0,
    tasks: 0,
    proofs: 0,
    catalogueItems: 0,
    variants: 0,
    ledgerRows: 0,
    deliveries: 0,
    otherOrganizations: 0,
    tierBlock: 0,
  };
}
