// Package termtext lays text out for a terminal by the columns it takes
// there, not by its count of characters: an East Asian wide character
// takes two columns, an emoji sequence two, a combining mark or a
// zero-width joiner none (github.com/mattn/go-runewidth, which reads
// grapheme clusters). Characters of ambiguous width (…, ±, box drawing)
// take one whatever the locale, so that the command's output does not
// depend on it.
//
// [Width] measures text, [Clip] cuts it to a number of columns, never in
// the middle of a character as it is displayed, and [Table] aligns
// tab-separated columns as text/tabwriter does, by display width: a row
// of Chinese, Japanese or Korean text leaves the columns after it where
// the other rows have them. For ASCII text each gives what counting bytes
// gives, so output in English is what it was.
//
// The package lays out text for people at a terminal; what the MCP server
// hands an agent is bounded in runes and bytes, by package mcpserver.
package termtext
