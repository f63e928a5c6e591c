import type { vendorOperations } from "@printshop/shared/contracts/crm";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import {
  createAddress,
  createContact,
  createVendor,
  deleteChild,
  findVendor,
  listVendors,
  setArchived,
  updateAddress,
  updateContact,
  updateVendor,
} from "../store/vendors.ts";

/** `/v1/vendors`: who the shop buys from and outsources to, archived rather than deleted. */
export function vendorRoutes(
  { sql, config }: ServiceDeps<Config>,
): Handlers<typeof vendorOperations> {
  return {
    createVendor: async ({ body, organizationId }) => ({
      status: 201,
      data: await createVendor(sql, organizationId, body),
      message: "Vendor created",
    }),
    listVendors: async ({ query, organizationId }) => ({
      data: await listVendors(sql, organizationId, query, config.PAGE_SIZE_MAX),
    }),
    getVendor: async ({ params, organizationId }) => ({
      data: await findVendor(sql, organizationId, params.vendorId),
    }),
    updateVendor: async ({ params, body, organizationId }) => ({
      data: await updateVendor(sql, organizationId, params.vendorId, body),
      message: "Vendor updated",
    }),
    archiveVendor: async ({ params, organizationId }) => ({
      data: await setArchived(sql, organizationId, params.vendorId, true),
      message: "Vendor archived",
    }),
    unarchiveVendor: async ({ params, organizationId }) => ({
      data: await setArchived(sql, organizationId, params.vendorId, false),
      message: "Vendor restored",
    }),
    createVendorContact: async ({ params, body, organizationId }) => ({
      status: 201,
      data: await createContact(sql, organizationId, params.vendorId, body),
      message: "Contact added",
    }),
    updateVendorContact: async ({ params, body, organizationId }) => ({
      data: await updateContact(sql, organizationId, params.vendorContactId, body),
      message: "Contact updated",
    }),
    deleteVendorContact: async ({ params, organizationId }) => ({
      data: await deleteChild(sql, organizationId, "vendor_contacts", params.vendorContactId),
      message: "Contact removed",
    }),
    createVendorAddress: async ({ params, body, organizationId }) => ({
      status: 201,
      data: await createAddress(sql, organizationId, params.vendorId, body),
      message: "Address added",
    }),
    updateVendorAddress: async ({ params, body, organizationId }) => ({
      data: await updateAddress(sql, organizationId, params.vendorAddressId, body),
      message: "Address updated",
    }),
    deleteVendorAddress: async ({ params, organizationId }) => ({
      data: await deleteChild(sql, organizationId, "vendor_addresses", params.vendorAddressId),
      message: "Address removed",
    }),
  };
}
