import {
  type Queryable,
  read,
  type Sql,
  transaction,
  type TransactionSql,
} from "@printshop/shared/db";
import type { CustomerAddress, CustomerContact } from "@printshop/shared/contracts/crm";
import { changedColumns } from "@printshop/shared/db/fields";
import {
  col,
  type Column,
  type Computed,
  defineTable,
  type ResourceOf,
  type RowOf,
  type Table,
} from "@printshop/shared/db/table";
import { notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";

// Contacts and addresses of a parent record, a customer or a vendor: one implementation for
// both. The parent's name gives all that differs: the tables (`customer_contacts`,
// `customer_addresses`; `vendor_contacts`, `vendor_addresses`), the column naming the parent
// (`customer_id`, `vendor_id`) and its field (`customerId`, `vendorId`), and what a 404 calls a
// missing child (below). Children are addressed by their own ids; each change to one is its
// parent's, which the parent's store announces.

/** What a 404 calls a missing child, by parent (the wording each store has always answered). */
const CHILD_NAMES = {
  customer: { contacts: "Contact", addresses: "Address" },
  vendor: { contacts: "Vendor contact", addresses: "Vendor address" },
} as const;

/** The records that have contacts and addresses. */
export type Parent = keyof typeof CHILD_NAMES;

type Kind = keyof typeof CHILD_NAMES[Parent];

/** A parent's two child tables. */
export type ChildTableName<P extends Parent> = `${P}_${Kind}`;

/** The parent's id under its field: `{ customerId }` or `{ vendorId }`. */
export type ParentRef<P extends Parent> = { [_ in `${P}Id`]: string };

/** Text columns that may be NULL, under these fields in this order. */
function optionalText<const K extends string>(
  ...fields: K[]
): Record<K, Column<string | null, string | null>> {
  const column = col.text().nullable();
  return Object.fromEntries(fields.map((field) => [field, column])) as Record<K, typeof column>;
}

// A contact's and an address's own fields (after the ids, before the times), whatever the parent.
const CONTACT_COLUMNS = optionalText("firstName", "lastName", "email", "phone", "role");
const ADDRESS_COLUMNS = optionalText("label", "street", "city", "state", "postcode", "country");

/** A child table's columns: its id, its parent's, its own fields, then its times. */
type ChildColumns<P extends Parent, Own> =
  & { id: Column<string, string> }
  & { [_ in `${P}Id`]: Column<string, string> }
  & Own
  & { createdAt: Column<Date, string>; updatedAt: Column<Date, string> };

type ContactTable<P extends Parent> = Table<ChildColumns<P, typeof CONTACT_COLUMNS>>;
type AddressTable<P extends Parent> = Table<ChildColumns<P, typeof ADDRESS_COLUMNS>>;

/** A contact as answered: the same fields whatever the parent, but its parent's. */
export type Contact<P extends Parent> = ResourceOf<ContactTable<P>>;

/** An address as answered: the same fields whatever the parent, but its parent's. */
export type Address<P extends Parent> = ResourceOf<AddressTable<P>>;

type Times = "createdAt" | "updatedAt";

/** The fields a contact's create or update body may give. */
export type ContactInput = Partial<Omit<CustomerContact, "id" | "customerId" | Times>>;

/** The fields an address's create or update body may give. */
export type AddressInput = Partial<Omit<CustomerAddress, "id" | "customerId" | Times>>;

/** A parent's contacts and addresses, each in `created_at, id` order. */
export interface Children<P extends Parent> {
  contacts: Contact<P>[];
  addresses: Address<P>[];
}

/** A parent's children, as its table declares them: computed, where the parent shows them. */
export function childrenOf<P extends Parent>(
  _parent: P,
): { contacts: Computed<Contact<P>[]>; addresses: Computed<Address<P>[]> } {
  return { contacts: col.computed<Contact<P>[]>(), addresses: col.computed<Address<P>[]>() };
}

/** One of a parent's child tables, declared once for both parents. */
function childTable<P extends Parent, const Own extends object>(
  parent: P,
  kind: Kind,
  own: Own,
): Table<ChildColumns<P, Own>> {
  // A computed key is typed as any string; it is the parent's field, `customerId` or `vendorId`.
  const parentId = { [`${parent}Id`]: col.uuid() } as { [_ in `${P}Id`]: Column<string, string> };
  return defineTable<ChildColumns<P, Own>>({
    name: `${parent}_${kind}`,
    tenant: true,
    noun: CHILD_NAMES[parent][kind],
    references: { [`${parent}_id`]: `${parent}s` },
    columns: {
      id: col.uuid(),
      ...parentId,
      ...own,
      createdAt: col.timestamp(),
      updatedAt: col.timestamp(),
    },
  });
}

/** What a parent's store gives: which parent it is, its lock and its own event. */
export interface ParentKind<P extends Parent> {
  parent: P;
  /** Locks the parent (so its children change one at a time), or throws its 404. */
  lock(tx: TransactionSql, organizationId: string, id: string): Promise<unknown>;
  /** After a change to one of its children: the parent's `….updated` event. */
  announce(tx: TransactionSql, organizationId: string, id: string): Promise<unknown>;
}

/** The contacts and addresses of one kind of parent, as its store and routes use them. */
export interface People<P extends Parent> {
  /** The parents' children, by parent id: two statements whatever the number of parents. */
  childrenOf(tx: Queryable, ids: readonly string[]): Promise<(id: string) => Children<P>>;
  createContact(
    sql: Sql,
    organizationId: string,
    parentId: string,
    input: ContactInput,
  ): Promise<Contact<P>>;
  createAddress(
    sql: Sql,
    organizationId: string,
    parentId: string,
    input: AddressInput,
  ): Promise<Address<P>>;
  /** Changes a contact; a body that changes nothing answers it as it is, with no event. */
  updateContact(
    sql: Sql,
    organizationId: string,
    id: string,
    input: ContactInput,
  ): Promise<Contact<P>>;
  /** Changes an address; a body that changes nothing answers it as it is, with no event. */
  updateAddress(
    sql: Sql,
    organizationId: string,
    id: string,
    input: AddressInput,
  ): Promise<Address<P>>;
  deleteChild(
    sql: Sql,
    organizationId: string,
    table: ChildTableName<P>,
    id: string,
  ): Promise<{ id: string } & ParentRef<P>>;
}

/** What writing a child needs of its table, whichever child it is. */
interface ChildRows<Row> {
  readonly name: string;
  readonly noun: string;
  readonly select: string;
  find(tx: Queryable, organizationId: string, id: string): Promise<Row | null>;
}

/** A child's row with its parent's id read a second time as `parent_id`, whichever its column. */
type WithParent<Row> = Row & { parent_id: string };

/** Rows by their parent, in the order read: one pass, each list pushed onto. */
function groupByParent<R extends { parent_id: string }, T>(
  rows: readonly R[],
  to: (row: R) => T,
): Map<string, T[]> {
  const by = new Map<string, T[]>();
  for (const row of rows) {
    const list = by.get(row.parent_id);
    if (list) list.push(to(row));
    else by.set(row.parent_id, [to(row)]);
  }
  return by;
}

/** The contacts and addresses of one kind of parent, for its store to use and export. */
export function people<P extends Parent>(kind: ParentKind<P>): People<P> {
  const column = `${kind.parent}_id`;
  const parentTable = `${kind.parent}s`;
  const ref = (id: string) => ({ [`${kind.parent}Id`]: id }) as ParentRef<P>;
  const contacts = childTable(kind.parent, "contacts", CONTACT_COLUMNS);
  const addresses = childTable(kind.parent, "addresses", ADDRESS_COLUMNS);
  /** A child's columns, and its parent's id again as `parent_id`. */
  const selectOf = (child: ChildRows<unknown>) => `${child.select}, ${column} AS parent_id`;

  /**
   * A child, read again once its parent is locked, or the child's 404. Every change to a child
   * takes its parent's lock first, so what is read under it stays so until commit; read before
   * it, the child may have been changed or deleted by the time the lock is had (a PATCH that
   * raced a DELETE answered 500, and two DELETEs both answered 200 with an event each). A parent
   * deleted meanwhile took its children with it: the child's 404 then too, since the child is
   * what was asked for.
   */
  async function lockChild<Row extends object>(
    tx: TransactionSql,
    child: ChildRows<Row>,
    organizationId: string,
    id: string,
  ): Promise<{ row: Row; parentId: string }> {
    const [seen] = await tx<{ parent_id: string }[]>`
      SELECT ${tx(column)} AS parent_id FROM ${tx(child.name)}
      WHERE organization_id = ${organizationId} AND id = ${id}`;
    if (!seen) throw notFound(child.noun, id);
    // A child never moves to another parent, so the one seen is the one to lock.
    await tx`
      SELECT 1 FROM ${tx(parentTable)}
      WHERE organization_id = ${organizationId} AND id = ${seen.parent_id} FOR UPDATE`;
    const row = await child.find(tx, organizationId, id);
    if (!row) throw notFound(child.noun, id);
    return { row, parentId: seen.parent_id };
  }

  async function insertChild<Row extends object>(
    sql: Sql,
    child: ChildRows<Row>,
    organizationId: string,
    parentId: string,
    input: object,
  ): Promise<Row> {
    // Wrapped: the type sql.begin answers cannot be worked out for a bare generic row.
    const { row } = await transaction(sql, async (tx) => {
      await kind.lock(tx, organizationId, parentId);
      const [row] = await tx<Row[]>`
        INSERT INTO ${tx(child.name)} ${
        tx({
          id: uuidv7(),
          organization_id: organizationId,
          [column]: parentId,
          ...changedColumns(input),
        })
      } RETURNING ${tx.unsafe(child.select)}`;
      await kind.announce(tx, organizationId, parentId);
      return { row: row! };
    });
    return row;
  }

  async function updateChild<Row extends object>(
    sql: Sql,
    child: ChildRows<Row>,
    organizationId: string,
    id: string,
    input: object,
  ): Promise<Row> {
    // Wrapped: the type sql.begin answers cannot be worked out for a bare generic row.
    const { row } = await transaction(sql, async (tx) => {
      const { row: current, parentId } = await lockChild(tx, child, organizationId, id);
      const changes = changedColumns(input);
      if (Object.keys(changes).length === 0) return { row: current };
      const [row] = await tx<Row[]>`
        UPDATE ${tx(child.name)} SET ${tx(changes)}, updated_at = now() WHERE id = ${id}
        RETURNING ${tx.unsafe(child.select)}`;
      // Held by the parent's lock, the row is there; should it not be, nothing changed.
      if (!row) throw notFound(child.noun, id);
      await kind.announce(tx, organizationId, parentId);
      return { row };
    });
    return row;
  }

  return {
    async childrenOf(sql, ids) {
      if (ids.length === 0) return () => ({ contacts: [], addresses: [] });
      // A list's render gives the pool: read for the organisation, on the list's own connection
      // (read() reuses it), since straight on the pool the policies would show no children.
      const [contactRows, addressRows] = await read(sql, (tx) =>
        Promise.all([
          tx<WithParent<RowOf<ContactTable<P>>>[]>`
            SELECT ${tx.unsafe(selectOf(contacts))} FROM ${tx(contacts.name)}
            WHERE ${tx(column)} = ANY(${ids}::uuid[]) ORDER BY created_at, id`,
          tx<WithParent<RowOf<AddressTable<P>>>[]>`
            SELECT ${tx.unsafe(selectOf(addresses))} FROM ${tx(addresses.name)}
            WHERE ${tx(column)} = ANY(${ids}::uuid[]) ORDER BY created_at, id`,
        ]));
      const contactsOf = groupByParent(contactRows, contacts.read);
      const addressesOf = groupByParent(addressRows, addresses.read);
      return (id) => ({ contacts: contactsOf.get(id) ?? [], addresses: addressesOf.get(id) ?? [] });
    },
    async createContact(sql, organizationId, parentId, input) {
      return contacts.read(await insertChild(sql, contacts, organizationId, parentId, input));
    },
    async createAddress(sql, organizationId, parentId, input) {
      return addresses.read(await insertChild(sql, addresses, organizationId, parentId, input));
    },
    async updateContact(sql, organizationId, id, input) {
      return contacts.read(await updateChild(sql, contacts, organizationId, id, input));
    },
    async updateAddress(sql, organizationId, id, input) {
      return addresses.read(await updateChild(sql, addresses, organizationId, id, input));
    },
    async deleteChild(sql, organizationId, table, id) {
      const child = table === contacts.name ? contacts : addresses;
      const parentId = await transaction(sql, async (tx) => {
        const { parentId } = await lockChild<object>(tx, child, organizationId, id);
        const gone = await tx`DELETE FROM ${tx(child.name)} WHERE id = ${id} RETURNING id`;
        // Held by the parent's lock, the row is there; should it not be, nothing was deleted.
        if (gone.length === 0) throw notFound(child.noun, id);
        await kind.announce(tx, organizationId, parentId);
        return parentId;
      });
      return { id, ...ref(parentId) };
    },
  };
}
