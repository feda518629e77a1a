export const TRAIT_VALUE_TYPES = ['string', 'enum', 'number', 'boolean', 'array', 'object'] as const;
export type TraitValueType = (typeof TRAIT_VALUE_TYPES)[number];

export const TRAIT_CATEGORIES = ['identity', 'preferences', 'context', 'custom'] as const;
export type TraitCategory = string;

/** The definition of one trait: how its value is validated, extracted and injected into prompts. */
export interface TraitSchema {
  key: string;
  label: string;
  description: string;
  valueType: TraitValueType;
  /** Allowed values when valueType is `enum`. */
  enumValues?: string[];
  category: TraitCategory;
  extraction: {
    enabled: boolean;
    /** Instruction given to the LLM extractor for this trait. */
    promptSnippet: string;
    /** An extracted value replaces an extracted one only with at least this confidence. */
    confidenceThreshold: number;
  };
  injection: {
    enabled: boolean;
    /** Text injected into the prompt; `{{value}}` stands for the trait value. */
    template: string;
    /** Higher first. */
    priority: number;
  };
}

/** Keys: 1 to 100 characters of letters, digits, `_`, `-`, `.`. */
export const TRAIT_KEY_PATTERN = /^[A-Za-z0-9_.-]{1,100}$/;
