// Friendly generated nicknames, for children who would rather not type one.
const ADJECTIVES = ["Brave", "Sunny", "Clever", "Happy", "Swift", "Gentle", "Lucky", "Bright", "Jolly", "Mighty", "Curious", "Cosy", "Bouncy", "Sparkly", "Calm", "Zippy"];
const ANIMALS = ["Otter", "Panda", "Fox", "Owl", "Koala", "Tiger", "Dolphin", "Penguin", "Rabbit", "Turtle", "Lion", "Hedgehog", "Robin", "Llama", "Beaver", "Whale"];

export function friendlyName() {
  const pick = (list) => list[Math.floor(Math.random() * list.length)];
  return `${pick(ADJECTIVES)} ${pick(ANIMALS)}`;
}
