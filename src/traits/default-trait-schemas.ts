import { TraitSchema } from './trait-schema';

/** The built-in trait schemas, used unless TRAIT_SCHEMAS_FILE names another set. */
export const DEFAULT_TRAIT_SCHEMAS: readonly TraitSchema[] = [
  {
    key: 'name',
    label: 'Name',
    description: 'The name the user wants to be called.',
    valueType: 'string',
    category: 'identity',
    extraction: {
      enabled: true,
      promptSnippet: 'The name the user states for themselves (not names of other people).',
      confidenceThreshold: 0.7,
    },
    injection: { enabled: true, template: 'Name: {{value}}', priority: 100 },
  },
  {
    key: 'preferred_language',
    label: 'Preferred language',
    description: 'The natural language the user prefers answers in.',
    valueType: 'string',
    category: 'identity',
    extraction: {
      enabled: true,
      promptSnippet:
        'The language the user asks to be answered in, or clearly writes in, as an English name (e.g. "German").',
      confidenceThreshold: 0.7,
    },
    injection: { enabled: true, template: 'Preferred language: {{value}}', priority: 90 },
  },
  {
    key: 'communication_style',
    label: 'Communication style',
    description: 'The tone the user prefers.',
    valueType: 'enum',
    enumValues: ['formal', 'casual', 'friendly', 'direct', 'technical'],
    category: 'preferences',
    extraction: {
      enabled: true,
      promptSnippet: 'The tone the user asks for: one of formal, casual, friendly, direct, technical.',
      confidenceThreshold: 0.6,
    },
    injection: { enabled: true, template: 'Preferred communication style: {{value}}', priority: 80 },
  },
  {
    key: 'detail_preference',
    label: 'Detail preference',
    description: 'How much detail the user wants in answers.',
    valueType: 'enum',
    enumValues: ['brief', 'balanced', 'detailed'],
    category: 'preferences',
    extraction: {
      enabled: true,
      promptSnippet: 'How much detail the user asks for: one of brief, balanced, detailed.',
      confidenceThreshold: 0.6,
    },
    injection: { enabled: true, template: 'Preferred level of detail: {{value}}', priority: 70 },
  },
  {
    key: 'expertise_level',
    label: 'Expertise level',
    description: 'How experienced the user is in the subject they ask about.',
    valueType: 'enum',
    enumValues: ['beginner', 'intermediate', 'advanced', 'expert'],
    category: 'context',
    extraction: {
      enabled: true,
      promptSnippet: 'The user’s stated experience: one of beginner, intermediate, advanced, expert.',
      confidenceThreshold: 0.6,
    },
    injection: { enabled: true, template: 'Expertise level: {{value}}', priority: 60 },
  },
  {
    key: 'timezone',
    label: 'Time zone or location',
    description: 'The user’s time zone (IANA name) or, failing that, where they live.',
    valueType: 'string',
    category: 'context',
    extraction: {
      enabled: true,
      promptSnippet: 'The user’s IANA time zone (e.g. "Europe/Berlin") or the city or country they live in.',
      confidenceThreshold: 0.7,
    },
    injection: { enabled: true, template: 'Time zone / location: {{value}}', priority: 50 },
  },
  {
    key: 'interests',
    label: 'Interests',
    description: 'Topics the user is interested in.',
    valueType: 'array',
    category: 'preferences',
    extraction: {
      enabled: true,
      promptSnippet: 'Topics or hobbies the user says they like or are interested in, as short phrases.',
      confidenceThreshold: 0.5,
    },
    injection: { enabled: true, template: 'Interests: {{value}}', priority: 40 },
  },
  {
    key: 'current_goals',
    label: 'Current goals',
    description: 'What the user is currently trying to achieve.',
    valueType: 'array',
    category: 'context',
    extraction: {
      enabled: true,
      promptSnippet: 'Goals or projects the user says they are working on now, as short phrases.',
      confidenceThreshold: 0.5,
    },
    injection: { enabled: true, template: 'Current goals: {{value}}', priority: 30 },
  },
];
