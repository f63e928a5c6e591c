import type { customerOperations } from "@printshop/shared/contracts/crm";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import {
  bulkArchive,
  bulkSetTier,
  bulkTag,
  createAddress,
  createContact,
  createCustomer,
  deleteChild,
  deleteCustomer,
  findCustomer,
  listCustomers,
  updateAddress,
  updateContact,
  updateCustomer,
} from "../store/customers.ts";

/** `/v1/customers`: the shop's clients, their contacts and addresses, and bulk changes. */
export function customerRoutes(
  { sql, config }: ServiceDeps<Config>,
): Handlers<typeof customerOperations> {
  return {
    createCustomer: async ({ body, organizationId }) => ({
      status: 201,
      data: await createCustomer(sql, organizationId, body),
      message: "Customer created",
    }),
    listCustomers: async ({ query, organizationId }) => ({
      data: await listCustomers(sql, organizationId, query, config.PAGE_SIZE_MAX),
    }),
    getCustomer: async ({ params, organizationId }) => ({
      data: await findCustomer(sql, organizationId, params.customerId),
    }),
    updateCustomer: async ({ params, body, organizationId }) => ({
      data: await updateCustomer(sql, organizationId, params.customerId, body),
      message: "Customer updated",
    }),
    deleteCustomer: async ({ params, organizationId }) => {
      const customer = await deleteCustomer(sql, organizationId, params.customerId);
      return { data: { id: customer.id }, message: "Customer deleted" };
    },
    createCustomerContact: async ({ params, body, organizationId }) => ({
      status: 201,
      data: await createContact(sql, organizationId, params.customerId, body),
      message: "Contact added",
    }),
    updateCustomerContact: async ({ params, body, organizationId }) => ({
      data: await updateContact(sql, organizationId, params.customerContactId, body),
      message: "Contact updated",
    }),
    deleteCustomerContact: async ({ params, organizationId }) => ({
      data: await deleteChild(sql, organizationId, "customer_contacts", params.customerContactId),
      message: "Contact removed",
    }),
    createCustomerAddress: async ({ params, body, organizationId }) => ({
      status: 201,
      data: await createAddress(sql, organizationId, params.customerId, body),
      message: "Address added",
    }),
    updateCustomerAddress: async ({ params, body, organizationId }) => ({
      data: await updateAddress(sql, organizationId, params.customerAddressId, body),
      message: "Address updated",
    }),
    deleteCustomerAddress: async ({ params, organizationId }) => ({
      data: await deleteChild(sql, organizationId, "customer_addresses", params.customerAddressId),
      message: "Address removed",
    }),
    bulkSetCustomerTier: async ({ body, organizationId }) => ({
      data: await bulkSetTier(sql, organizationId, body, config.BULK_MAX_ROWS),
    }),
    bulkTagCustomers: async ({ body, organizationId }) => ({
      data: await bulkTag(sql, organizationId, body, config.BULK_MAX_ROWS),
    }),
    bulkArchiveCustomers: async ({ body, organizationId }) => ({
      data: await bulkArchive(sql, organizationId, body, config.BULK_MAX_ROWS),
    }),
  };
}
