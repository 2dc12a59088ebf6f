import Joi from 'joi';

/** The product service's `{success, message, data}` envelope; all three keys always present. */
export const envelope = <T>(message: string, data: T) => ({ success: true, message, data: data ?? null });

export const envelopeSchema = (data: Joi.Schema) =>
  Joi.object({ success: Joi.boolean().required(), message: Joi.string().required(), data: data.required() });
