/**
 * What the route sweep (`e2e/route_sweep_test.ts`) needs to know about a service that its
 * contract cannot tell it: the rows to aim at, and what the schemas alone cannot make valid.
 * Each service gives it in its own module beside this one (`e2e/sweep/<service>.ts`), so a new
 * resource edits only its service's module; `mod.ts` lists the modules, once per service.
 */
import type { Owner } from "@printshop/shared/routes";

/** The ids one organisation's fixtures hold, by fixture name (`quoteId`, `customerContactId`). */
export class Fixture {
  readonly #ids: ReadonlyMap<string, string>;

  constructor(ids: ReadonlyMap<string, string>) {
    this.#ids = ids;
  }

  /** The id of a fixture; a name no module creates fails the sweep by that name. */
  id(name: string): string {
    const id = this.#ids.get(name);
    if (id === undefined) {
      throw new Error(`no sweep fixture "${name}": a module in e2e/sweep/ must create it`);
    }
    return id;
  }

  has(name: string): boolean {
    return this.#ids.has(name);
  }
}

/** Calls as one organisation, each answer held to the document like every request of the sweep. */
export interface SweepClient {
  /** POSTs a create; its answer must be 200 or 201. Returns the created row's id. */
  create(path: string, body: unknown): Promise<string>;
  /** POSTs `body`; the answer must have exactly `status`. Returns its `data`. */
  post(path: string, body: unknown, status: number): Promise<unknown>;
  /** GETs `path`; the answer must be 200. Returns its `data`. */
  get(path: string): Promise<unknown>;
}

/** A body the operation accepts, made from the organisation's fixtures. */
export type ValidBody = (fixture: Fixture, receiverUrl: string) => unknown;

/** Field → why it is left as it is, for the tables below that name exceptions. */
export type Reasons = Readonly<Record<string, string>>;

export interface ServiceSweep {
  service: Owner;
  /** Path parameter of this service's operations → the fixture that supplies it. */
  params: Readonly<Record<string, string>>;
  /**
   * Body field of this service's operations that names a resource → the fixture of that kind.
   * B sends A's id in each and must be refused. A UUID field that is neither here nor in
   * `unresolved` (or `UNRESOLVED_EVERYWHERE`) fails the sweep by name.
   */
  references: Readonly<Record<string, string>>;
  /** UUID body fields that name nothing the sweep can resolve, and why. */
  unresolved?: Reasons;
  /**
   * By operationId: reference fields it keeps without resolving, because the resource lives in
   * another service whose tables it may not read.
   */
  crossService?: Readonly<Record<string, Reasons>>;
  /**
   * By operationId: a valid body the schema alone cannot give (a value whose meaning is another
   * resource, or a rule across fields). Everything else is generated from the required fields.
   */
  validBodies?: Readonly<Record<string, ValidBody>>;
  /**
   * By operationId: bodies that name rows by their own `id` (which the reference search leaves
   * out), and why. B sends the valid body made of A's rows at its own path and must be refused.
   */
  rowIdBodies?: Reasons;
  /**
   * Creates one organisation's fixtures, by name. `fixture` holds those of the modules before
   * this one in `mod.ts`.
   */
  create(
    client: SweepClient,
    fixture: Fixture,
    receiverUrl: string,
  ): Promise<Record<string, string>>;
  /** Fixtures that exist only once every module's are made (a delivery of their events). */
  settle?(client: SweepClient, fixture: Fixture): Promise<Record<string, string>>;
  /**
   * What the "nothing written" check reads back, by name: GET paths whose answers must be the
   * same after the sweep as before it. Every resource the service keeps should be in one.
   */
  snapshot(fixture: Fixture): Readonly<Record<string, string>>;
}

/** UUID body fields no service resolves, in any operation. */
export const UNRESOLVED_EVERYWHERE: Reasons = {
  decorationItemId: "a decoration catalogue item (no service keeps decoration items yet)",
  jobId: "a production job (no service keeps jobs yet)",
  ids: "a bulk target's rows: another organisation's are outcomes failed/not_found, by design",
  excludeIds: "rows a bulk target leaves out: another organisation's change nothing",
};
