import { factKindOfContent } from './fact-kinds';

describe('factKindOfContent', () => {
  it.each([
    ['I live in Lisbon', 'location'],
    ['Lives in Lisbon', 'location'],
    ['User lives in Lisbon.', 'location'],
    ['The user moved to Berlin last month.', 'location'],
    ['User works at Acme.', 'employer'],
    ['User is vegetarian.', 'diet'],
    ['Loves surfing', 'likes:surfing'],
    ['User no longer likes surfing.', 'likes:surfing'],
    ["User's manager lives in Porto.", null],
    ['Has two kids', null],
  ])('reads %j as %j', (content, kind) => {
    expect(factKindOfContent(content)).toBe(kind);
  });
});
