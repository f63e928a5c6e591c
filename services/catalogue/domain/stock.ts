/**
 * Stock rules, as pure functions: what a variant's figures become after an adjustment or a
 * stocktake, and which ledger rows record the change. A variant either keeps locations (then
 * `stockOnHand` is their sum) or does not (then `stockOnHand` is a figure of its own).
 */
import type { ErrorDetail } from "@printshop/shared/http";
import { STOCK_MAX } from "@printshop/shared/contracts/catalogue";

export interface StockAtLocation {
  location: string;
  quantity: number;
}

export interface Stock {
  stockOnHand: number;
  stockReserved: number;
  stockByLocation: StockAtLocation[];
}

/** One ledger row to write: where, by how much, and the figures after it. */
export interface LedgerEntry {
  location: string | null;
  delta: number;
  stockOnHandAfter: number;
  locationQuantityAfter: number | null;
}

const sum = (rows: readonly StockAtLocation[]): number =>
  rows.reduce((total, row) => total + row.quantity, 0);

/** Locations are matched without regard to case; the first spelling is kept. */
const sameLocation = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/**
 * A new variant's stock from what a create row gives: with locations, stockOnHand is their sum
 * (a different stockOnHand beside them is a problem); reserved must not exceed it. The opening
 * ledger rows record where the stock came from.
 */
export function openingStock(
  given: { stockOnHand?: number; stockReserved?: number; stockByLocation?: StockAtLocation[] },
  path: string,
): { stock: Stock; ledger: LedgerEntry[] } | { problem: ErrorDetail } {
  const locations = given.stockByLocation ?? [];
  const located = sum(locations);
  if (locations.length > 0 && given.stockOnHand !== undefined && given.stockOnHand !== located) {
    return {
      problem: {
        path: `${path}stockOnHand`,
        message: `Must be the sum of stockByLocation (${located}) when both are given`,
      },
    };
  }
  const stockOnHand = locations.length > 0 ? located : given.stockOnHand ?? 0;
  if (stockOnHand > STOCK_MAX) {
    return {
      problem: { path: `${path}stockByLocation`, message: `Must sum to at most ${STOCK_MAX}` },
    };
  }
  const stockReserved = given.stockReserved ?? 0;
  if (stockReserved > stockOnHand) {
    return {
      problem: {
        path: `${path}stockReserved`,
        message: `Must not exceed the stock on hand (${stockOnHand})`,
      },
    };
  }
  const ledger: LedgerEntry[] = [];
  let running = 0;
  for (const row of locations) {
    if (row.quantity === 0) continue;
    running += row.quantity;
    ledger.push({
      location: row.location,
      delta: row.quantity,
      stockOnHandAfter: running,
      locationQuantityAfter: row.quantity,
    });
  }
  if (locations.length === 0 && stockOnHand !== 0) {
    ledger.push({
      location: null,
      delta: stockOnHand,
      stockOnHandAfter: stockOnHand,
      locationQuantityAfter: null,
    });
  }
  return { stock: { stockOnHand, stockReserved, stockByLocation: locations }, ledger };
}

/** Why an adjustment cannot be made: the request does not fit the variant (400) or stock (409). */
export type AdjustmentRefusal =
  | { kind: "invalid"; problem: ErrorDetail }
  | { kind: "conflict"; message: string };

/** The variant's stock after adding `delta` at `location`, or why not. */
export function adjust(
  stock: Stock,
  change: { location: string | null; delta: number },
  allowNegative: boolean,
): { stock: Stock; entry: LedgerEntry } | { refused: AdjustmentRefusal } {
  const keepsLocations = stock.stockByLocation.length > 0;
  if (keepsLocations && change.location === null) {
    return {
      refused: {
        kind: "invalid",
        problem: {
          path: "location",
          message: `This variant keeps stock by location (${
            stock.stockByLocation.map((l) => `"${l.location}"`).join(", ")
          }); say which location changes`,
        },
      },
    };
  }
  if (!keepsLocations && change.location !== null && stock.stockOnHand !== 0) {
    return {
      refused: {
        kind: "conflict",
        message: `This variant keeps ${stock.stockOnHand} units without a location; adjust it ` +
          `without one, or set stockByLocation first`,
      },
    };
  }
  const stockOnHand = stock.stockOnHand + change.delta;
  let stockByLocation = stock.stockByLocation;
  let locationQuantityAfter: number | null = null;
  if (change.location !== null) {
    const at = stockByLocation.findIndex((l) => sameLocation(l.location, change.location!));
    const before = at === -1 ? 0 : stockByLocation[at]!.quantity;
    locationQuantityAfter = before + change.delta;
    const row = {
      location: at === -1 ? change.location : stockByLocation[at]!.location,
      quantity: locationQuantityAfter,
    };
    stockByLocation = at === -1
      ? [...stockByLocation, row]
      : stockByLocation.map((l, i) => (i === at ? row : l));
    if (Math.abs(locationQuantityAfter) > STOCK_MAX) {
      return {
        refused: {
          kind: "conflict",
          message: `"${row.location}" would hold ${locationQuantityAfter}, beyond ±${STOCK_MAX}`,
        },
      };
    }
    if (!allowNegative && locationQuantityAfter < 0) {
      return {
        refused: {
          kind: "conflict",
          message: `"${row.location}" holds ${before}; taking ${-change.delta} would leave ` +
            `${locationQuantityAfter} (the organisation does not allow negative stock)`,
        },
      };
    }
  }
  if (Math.abs(stockOnHand) > STOCK_MAX) {
    return {
      refused: {
        kind: "conflict",
        message: `Stock on hand would be ${stockOnHand}, beyond ±${STOCK_MAX}`,
      },
    };
  }
  if (!allowNegative && stockOnHand < 0) {
    return {
      refused: {
        kind: "conflict",
        message: `The variant holds ${stock.stockOnHand}; taking ${-change.delta} would leave ` +
          `${stockOnHand} (the organisation does not allow negative stock)`,
      },
    };
  }
  if (!allowNegative && stockOnHand < stock.stockReserved) {
    return {
      refused: {
        kind: "conflict",
        message: `${stock.stockReserved} units are reserved; taking ${-change.delta} would ` +
          `leave ${stockOnHand} on hand, fewer than reserved`,
      },
    };
  }
  return {
    stock: { ...stock, stockOnHand, stockByLocation },
    entry: {
      location: change.location,
      delta: change.delta,
      stockOnHandAfter: stockOnHand,
      locationQuantityAfter,
    },
  };
}

/**
 * A PATCH's new figures as a stocktake: the ledger rows that take the variant from its stock to
 * the one asked for (one per location whose count changed), or the problem with the request.
 */
export function stocktake(
  stock: Stock,
  asked: { stockOnHand?: number; stockReserved?: number; stockByLocation?: StockAtLocation[] },
): { stock: Stock; ledger: LedgerEntry[] } | { problem: ErrorDetail } {
  const ledger: LedgerEntry[] = [];
  let next = stock;
  if (asked.stockByLocation !== undefined && asked.stockByLocation.length === 0) {
    // No locations from now on: each located count leaves, and the variant holds one figure,
    // the one asked for or else the total it had.
    let running = stock.stockOnHand;
    for (const row of stock.stockByLocation) {
      if (row.quantity === 0) continue;
      running -= row.quantity;
      ledger.push({
        location: row.location,
        delta: -row.quantity,
        stockOnHandAfter: running,
        locationQuantityAfter: 0,
      });
    }
    const figure = asked.stockOnHand ?? stock.stockOnHand;
    if (figure !== running) {
      ledger.push({
        location: null,
        delta: figure - running,
        stockOnHandAfter: figure,
        locationQuantityAfter: null,
      });
    }
    next = { ...next, stockOnHand: figure, stockByLocation: [] };
  } else if (asked.stockByLocation !== undefined) {
    const wanted = asked.stockByLocation;
    const located = sum(wanted);
    if (asked.stockOnHand !== undefined && asked.stockOnHand !== located) {
      return {
        problem: {
          path: "stockOnHand",
          message: `Must be the sum of stockByLocation (${located}) when both are given`,
        },
      };
    }
    if (located > STOCK_MAX) {
      return { problem: { path: "stockByLocation", message: `Must sum to at most ${STOCK_MAX}` } };
    }
    let running = stock.stockOnHand;
    // Stock held without a location becomes located stock: it leaves as one row first.
    if (stock.stockByLocation.length === 0 && stock.stockOnHand !== 0 && wanted.length > 0) {
      running = 0;
      ledger.push({
        location: null,
        delta: -stock.stockOnHand,
        stockOnHandAfter: 0,
        locationQuantityAfter: null,
      });
    }
    const names = [
      ...stock.stockByLocation.map((l) => l.location),
      ...wanted.map((l) => l.location).filter((name) =>
        !stock.stockByLocation.some((l) => sameLocation(l.location, name))
      ),
    ];
    for (const name of names) {
      const before = stock.stockByLocation.find((l) => sameLocation(l.location, name))?.quantity ??
        0;
      const after = wanted.find((l) => sameLocation(l.location, name))?.quantity ?? 0;
      if (after === before) continue;
      running += after - before;
      ledger.push({
        location: name,
        delta: after - before,
        stockOnHandAfter: running,
        locationQuantityAfter: after,
      });
    }
    next = { ...next, stockOnHand: located, stockByLocation: wanted };
  } else if (asked.stockOnHand !== undefined) {
    if (stock.stockByLocation.length > 0) {
      return {
        problem: {
          path: "stockOnHand",
          message: "This variant keeps stock by location; set stockByLocation or adjust a location",
        },
      };
    }
    const delta = asked.stockOnHand - stock.stockOnHand;
    if (delta !== 0) {
      ledger.push({
        location: null,
        delta,
        stockOnHandAfter: asked.stockOnHand,
        locationQuantityAfter: null,
      });
    }
    next = { ...next, stockOnHand: asked.stockOnHand };
  }
  const stockReserved = asked.stockReserved ?? stock.stockReserved;
  if (
    stockReserved > next.stockOnHand && (asked.stockReserved !== undefined || ledger.length > 0)
  ) {
    return {
      problem: {
        path: asked.stockReserved !== undefined ? "stockReserved" : "stockOnHand",
        message:
          `Reserved (${stockReserved}) must not exceed the stock on hand (${next.stockOnHand})`,
      },
    };
  }
  return { stock: { ...next, stockReserved }, ledger };
}
