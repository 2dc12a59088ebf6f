import Joi from 'joi';
import { integer, pagingQuery } from '../shared/joi-extras.js';

const optionalText = (max: number) => Joi.string().trim().max(max).allow('', null);

const supplierFields = {
  name: Joi.string().trim().min(1).max(255).required().messages({
    'any.required': 'inventory.supplier.name.required',
    'string.empty': 'inventory.supplier.name.required',
    'string.min': 'inventory.supplier.name.required',
    'string.base': 'inventory.supplier.name.required',
    'string.max': 'inventory.supplier.name.too.long',
  }),
  contactName: optionalText(255),
  phone: optionalText(50),
  email: Joi.string()
    .trim()
    .max(320)
    .email({ tlds: { allow: false } })
    .allow('', null)
    .messages({ 'string.email': 'inventory.supplier.email.invalid' }),
  // Absent on PUT: keep the stored value; null: REPLENISHMENT_DEFAULT_LEAD_DAYS.
  leadTimeDays: integer().min(0).max(365).allow(null).messages({
    'number.min': 'inventory.supplier.lead.time.range',
    'number.max': 'inventory.supplier.lead.time.range',
    'number.base': 'inventory.supplier.lead.time.range',
    'number.integer': 'inventory.supplier.lead.time.range',
  }),
};

/** Supplier creation body: `id` must be absent (checked after field validation, contract order). */
export const createSupplierBody = Joi.object({ ...supplierFields, id: Joi.any() });

/** The supplier update body: a body id must equal the path id (checked by the use case). */
export const updateSupplierBody = Joi.object({ ...supplierFields, id: Joi.any() });

export const supplierIdParams = Joi.object({ id: Joi.string().max(64).required() });

/** The supplier list query: `limit` caps the plain array; `size` switches to a Spring-style page. */
export const listSuppliersQuery = Joi.object({
  limit: integer().min(0),
  ...pagingQuery,
});

/** The supplier search query. */
export const searchSuppliersQuery = Joi.object({ name: Joi.string().allow('').max(255).required() });

export const supplierViewSchema = Joi.object({
  id: Joi.string().required(),
  name: Joi.string().required(),
  contactName: Joi.string().allow(null).required(),
  phone: Joi.string().allow(null).required(),
  email: Joi.string().allow(null).required(),
  leadTimeDays: Joi.number().integer().allow(null).required(),
  createdBy: Joi.string().required(),
  createdAt: Joi.string().isoDate().required(),
});
