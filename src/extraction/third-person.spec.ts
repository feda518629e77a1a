import { FACT_KIND_RULES, factKindOf } from '../memories/fact-kinds';
import { toThirdPerson } from './third-person';

describe('toThirdPerson', () => {
  it.each([
    ['I live in Lisbon.', 'User lives in Lisbon.'],
    ['I live in Lisbon and work as a data engineer.', 'User lives in Lisbon and works as a data engineer.'],
    ['I love surfing and hiking.', 'User loves surfing and hiking.'],
    ["I'm an expert in SQL but a beginner at Rust.", 'User is an expert in SQL but a beginner at Rust.'],
    ['I am trying to learn Portuguese.', 'User is trying to learn Portuguese.'],
    ["I don't like long meetings.", "User doesn't like long meetings."],
    ["I've been to Japan twice.", 'User has been to Japan twice.'],
    ['I have two kids.', 'User has two kids.'],
    ['I go to the gym.', 'User goes to the gym.'],
    ['I watch movies and I study history.', 'User watches movies and the user studies history.'],
    ['I really enjoy cooking for my kids.', 'User really enjoys cooking for their kids.'],
    ['Last month I moved to a new apartment.', 'Last month the user moved to a new apartment.'],
    ['My sister lives in Rome.', "User's sister lives in Rome."],
    ['I can swim, my wife taught me.', 'User can swim, their wife taught them.'],
    ['I no longer like surfing.', 'User no longer likes surfing.'],
  ])('%s', (sentence, expected) => {
    expect(toThirdPerson(sentence)).toBe(expected);
  });
});

describe('single-valued facts (FACT_KIND_RULES)', () => {
  for (const rule of FACT_KIND_RULES) {
    it.each(rule.must)(`${rule.kind}: %s`, (sentence) => {
      expect(factKindOf(sentence)?.split(':')[0]).toBe(rule.kind);
    });
    it.each(rule.mustNot)(`not ${rule.kind}: %s`, (sentence) => {
      expect(factKindOf(sentence)?.split(':')[0]).not.toBe(rule.kind);
    });
  }

  it('names what a liking is about, so only the same liking is replaced', () => {
    expect(factKindOf('I love surfing')).toBe('likes:surfing');
    expect(factKindOf('I no longer like surfing.')).toBe('likes:surfing');
    expect(factKindOf("I don't like long meetings anymore")).toBe('likes:long meetings');
  });
});
