import { type Queryable, type Sql, transaction, type TransactionSql } from "@printshop/shared/db";
import type { CustomerAddress, CustomerContact } from "@printshop/shared/contracts/crm";
import { changedColumns } from "@printshop/shared/db/fields";
import { notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";

// Contacts and addresses of a parent record, a customer or a vendor: one implementation for
// both. The parent's name gives all that differs: the tables (`customer_contacts`,
// `customer_addresses`; `vendor_contacts`, `vendor_addresses`), the column naming the parent
// (`customer_id`, `vendor_id`), the answers' key for it (`customerId`, `vendorId`) and what a
// 404 calls a missing child (below). Children are addressed by their own ids; each change to one
// is its parent's, which the parent's store announces.

/** What a 404 calls a missing child, by parent (the wording each store has always answered). */
const CHILD_NAMES = {
  customer: { contacts: "Contact", addresses: "Address" },
  vendor: { contacts: "Vendor contact", addresses: "Vendor address" },
} as const;

/** The records that have contacts and addresses. */
export type Parent = keyof typeof CHILD_NAMES;

/** A parent's two child tables. */
export type ChildTable<P extends Parent> = `${P}_contacts` | `${P}_addresses`;

/** The parent's id under its answer key: `{ customerId }` or `{ vendorId }`. */
export type ParentRef<P extends Parent> = { [_ in `${P}Id`]: string };

/** A contact's fields, and an address's, whatever the parent (the contracts share them). */
type ContactFields = Omit<CustomerContact, "id" | "customerId">;
type AddressFields = Omit<CustomerAddress, "id" | "customerId">;

/** A contact as answered: the same fields whatever the parent, but its key. */
export type Contact<P extends Parent> = { id: string } & ParentRef<P> & ContactFields;

/** An address as answered: the same fields whatever the parent, but its key. */
export type Address<P extends Parent> = { id: string } & ParentRef<P> & AddressFields;

/** The fields a contact's create or update body may give. */
export type ContactInput = Partial<Omit<ContactFields, "createdAt" | "updatedAt">>;

/** The fields an address's create or update body may give. */
export type AddressInput = Partial<Omit<AddressFields, "createdAt" | "updatedAt">>;

/** A parent's contacts and addresses, each in `created_at, id` order. */
export interface Children<P extends Parent> {
  contacts: Contact<P>[];
  addresses: Address<P>[];
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
    table: ChildTable<P>,
    id: string,
  ): Promise<{ id: string } & ParentRef<P>>;
}

/** The parent's id is read as `parent_id` whichever its column. */
interface ContactRow {
  id: string;
  parent_id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  role: string | null;
  created_at: Date;
  updated_at: Date;
}

interface AddressRow {
  id: string;
  parent_id: string;
  label: string | null;
  street: string | null;
  city: string | null;
  state: string | null;
  postcode: string | null;
  country: string | null;
  created_at: Date;
  updated_at: Date;
}

/** One child table: its name, its columns (the parent's as `parent_id`), what a 404 calls it. */
interface Child {
  table: string;
  columns: string;
  what: string;
}

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
  const key = `${kind.parent}Id`;
  const ref = (id: string) => ({ [key]: id }) as ParentRef<P>;

  const toContact = (row: ContactRow): Contact<P> => ({
    id: row.id,
    ...ref(row.parent_id),
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    phone: row.phone,
    role: row.role,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  });

  const toAddress = (row: AddressRow): Address<P> => ({
    id: row.id,
    ...ref(row.parent_id),
    label: row.label,
    street: row.street,
    city: row.city,
    state: row.state,
    postcode: row.postcode,
    country: row.country,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  });

  const contacts = {
    table: `${kind.parent}_contacts`,
    columns: `id, ${column} AS parent_id, first_name, last_name, email, phone, role, ` +
      "created_at, updated_at",
    what: CHILD_NAMES[kind.parent].contacts,
  } satisfies Child;

  const addresses = {
    table: `${kind.parent}_addresses`,
    columns: `id, ${column} AS parent_id, label, street, city, state, postcode, country, ` +
      "created_at, updated_at",
    what: CHILD_NAMES[kind.parent].addresses,
  } satisfies Child;

  /** A child's parent, locked (so children of one parent change one at a time), or 404. */
  async function lockParentOf(
    tx: TransactionSql,
    child: Child,
    organizationId: string,
    id: string,
  ): Promise<string> {
    const [row] = await tx<{ parent_id: string }[]>`
      SELECT ${tx(column)} AS parent_id FROM ${tx(child.table)}
      WHERE organization_id = ${organizationId} AND id = ${id}`;
    if (!row) throw notFound(child.what, id);
    await kind.lock(tx, organizationId, row.parent_id);
    return row.parent_id;
  }

  async function insertChild<Row extends object>(
    sql: Sql,
    child: Child,
    organizationId: string,
    parentId: string,
    input: object,
  ): Promise<Row> {
    // Wrapped: the type sql.begin answers cannot be worked out for a bare generic row.
    const { row } = await transaction(sql, async (tx) => {
      await kind.lock(tx, organizationId, parentId);
      const [row] = await tx<Row[]>`
        INSERT INTO ${tx(child.table)} ${
        tx({
          id: uuidv7(),
          organization_id: organizationId,
          [column]: parentId,
          ...changedColumns(input),
        })
      } RETURNING ${tx.unsafe(child.columns)}`;
      await kind.announce(tx, organizationId, parentId);
      return { row: row! };
    });
    return row;
  }

  async function updateChild<Row extends object>(
    sql: Sql,
    child: Child,
    organizationId: string,
    id: string,
    input: object,
  ): Promise<Row> {
    // Wrapped: the type sql.begin answers cannot be worked out for a bare generic row.
    const { row } = await transaction(sql, async (tx) => {
      const parentId = await lockParentOf(tx, child, organizationId, id);
      const changes = changedColumns(input);
      if (Object.keys(changes).length === 0) {
        const [row] = await tx<Row[]>`
          SELECT ${tx.unsafe(child.columns)} FROM ${tx(child.table)} WHERE id = ${id}`;
        return { row: row! };
      }
      const [row] = await tx<Row[]>`
        UPDATE ${tx(child.table)} SET ${tx(changes)}, updated_at = now() WHERE id = ${id}
        RETURNING ${tx.unsafe(child.columns)}`;
      await kind.announce(tx, organizationId, parentId);
      return { row: row! };
    });
    return row;
  }

  return {
    async childrenOf(tx, ids) {
      if (ids.length === 0) return () => ({ contacts: [], addresses: [] });
      const [contactRows, addressRows] = await Promise.all([
        tx<ContactRow[]>`
          SELECT ${tx.unsafe(contacts.columns)} FROM ${tx(contacts.table)}
          WHERE ${tx(column)} = ANY(${ids}::uuid[]) ORDER BY created_at, id`,
        tx<AddressRow[]>`
          SELECT ${tx.unsafe(addresses.columns)} FROM ${tx(addresses.table)}
          WHERE ${tx(column)} = ANY(${ids}::uuid[]) ORDER BY created_at, id`,
      ]);
      const contactsOf = groupByParent(contactRows, toContact);
      const addressesOf = groupByParent(addressRows, toAddress);
      return (id) => ({ contacts: contactsOf.get(id) ?? [], addresses: addressesOf.get(id) ?? [] });
    },
    async createContact(sql, organizationId, parentId, input) {
      return toContact(
        await insertChild<ContactRow>(sql, contacts, organizationId, parentId, input),
      );
    },
    async createAddress(sql, organizationId, parentId, input) {
      return toAddress(
        await insertChild<AddressRow>(sql, addresses, organizationId, parentId, input),
      );
    },
    async updateContact(sql, organizationId, id, input) {
      return toContact(await updateChild<ContactRow>(sql, contacts, organizationId, id, input));
    },
    async updateAddress(sql, organizationId, id, input) {
      return toAddress(await updateChild<AddressRow>(sql, addresses, organizationId, id, input));
    },
    async deleteChild(sql, organizationId, table, id) {
      const child = table === contacts.table ? contacts : addresses;
      const parentId = await transaction(sql, async (tx) => {
        const parentId = await lockParentOf(tx, child, organizationId, id);
        await tx`DELETE FROM ${tx(child.table)} WHERE id = ${id}`;
        await kind.announce(tx, organizationId, parentId);
        return parentId;
      });
      return { id, ...ref(parentId) };
    },
  };
}
