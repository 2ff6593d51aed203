//! A sequence that is almost always one element long, kept inline in that case.
//!
//! Most Web connections carry one exchange (HTTP/1.0, and most PackMime-HTTP 1.1
//! connections). Their scripts and exchange times then need no heap allocation, and the
//! application's state stays within the connection's own cache lines: with a `Vec`, every
//! connection cost allocations at open and frees at close, and every segment a load from a
//! separate heap line.

use std::ops::{Deref, DerefMut};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OneOrMore<T> {
    One(T),
    /// Any other length (including none), on the heap.
    More(Vec<T>),
}

impl<T> OneOrMore<T> {
    /// Bytes held on the heap (none when inline).
    pub fn heap_bytes(&self) -> usize {
        match self {
            OneOrMore::One(_) => 0,
            OneOrMore::More(v) => v.capacity() * std::mem::size_of::<T>(),
        }
    }
}

impl<T> Deref for OneOrMore<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            OneOrMore::One(x) => std::slice::from_ref(x),
            OneOrMore::More(v) => v,
        }
    }
}

impl<T> DerefMut for OneOrMore<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            OneOrMore::One(x) => std::slice::from_mut(x),
            OneOrMore::More(v) => v,
        }
    }
}

impl<T> From<Vec<T>> for OneOrMore<T> {
    fn from(mut v: Vec<T>) -> Self {
        if v.len() == 1 {
            OneOrMore::One(v.pop().expect("one element"))
        } else {
            OneOrMore::More(v)
        }
    }
}

impl<T> FromIterator<T> for OneOrMore<T> {
    /// One element is kept inline without touching the heap; more are collected into a `Vec`.
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut it = items.into_iter();
        let Some(first) = it.next() else {
            return OneOrMore::More(Vec::new());
        };
        let Some(second) = it.next() else {
            return OneOrMore::One(first);
        };
        let mut v = Vec::with_capacity(2 + it.size_hint().0);
        v.push(first);
        v.push(second);
        v.extend(it);
        OneOrMore::More(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_zero_one_and_more_read_back_in_order() {
        let none: OneOrMore<u32> = std::iter::empty().collect();
        assert!(none.is_empty());
        let one: OneOrMore<u32> = [7].into_iter().collect();
        assert_eq!(one, OneOrMore::One(7));
        assert_eq!(&*one, &[7]);
        let mut three: OneOrMore<u32> = [1, 2, 3].into_iter().collect();
        assert_eq!(&*three, &[1, 2, 3]);
        three[1] = 5;
        assert_eq!(&*three, &[1, 5, 3]);
        assert_eq!(OneOrMore::from(vec![4]), OneOrMore::One(4));
        assert_eq!(OneOrMore::from(vec![4, 6]), OneOrMore::More(vec![4, 6]));
        let mut one = OneOrMore::from(vec![9]);
        one[0] += 1;
        assert_eq!(one.first(), Some(&10));
        assert_eq!(one.get(1), None);
    }
}
