import Joi from 'joi';

const pageable = Joi.object({
  pageNumber: Joi.number().integer().required(),
  pageSize: Joi.number().integer().required(),
  sort: Joi.array()
    .items(
      Joi.object({
        property: Joi.string().required(),
        direction: Joi.string().valid('ASC', 'DESC').required(),
      }),
    )
    .required(),
});

const springFields = (item: Joi.Schema) => ({
  content: Joi.array().items(item).required(),
  pageable: pageable.required(),
  totalElements: Joi.number().integer().required(),
  totalPages: Joi.number().integer().required(),
  last: Joi.boolean().required(),
  first: Joi.boolean().required(),
  number: Joi.number().integer().required(),
  size: Joi.number().integer().required(),
  numberOfElements: Joi.number().integer().required(),
  empty: Joi.boolean().required(),
});

/** Response schema of a Spring-style page. */
export const springPageSchema = (item: Joi.Schema) => Joi.object(springFields(item));

/** Response schema of the search page (the item search, the history search): the Spring page plus `page`. */
export const searchPageSchema = (item: Joi.Schema) =>
  Joi.object({
    ...springFields(item),
    page: Joi.object({
      size: Joi.number().integer().required(),
      number: Joi.number().integer().required(),
      totalElements: Joi.number().integer().required(),
      totalPages: Joi.number().integer().required(),
    }).required(),
  });
