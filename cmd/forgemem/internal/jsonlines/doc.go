// Package jsonlines reads the JSON Lines files people hand forgemem — a
// conversation, an evaluation dataset, off-topic queries — and helps its
// readers say what is wrong with a line in the file's terms rather than
// Go's: which line, which character of it, what kind of value was found.
//
// [Reader] gives the lines that are not blank, numbered as an editor
// numbers them, a UTF-8 byte order mark at the start of the file skipped
// ([NewLimitedReader]'s refuses a line longer than its bound, with a
// [*LineTooLongError], as soon as that much of it is read);
// [Line.Value] gives a line's JSON value, refusing a line that holds more
// than that (a second value, the "]" of an array cut into lines) or is
// not JSON with a [*NotOneValueError]; [Line.Syntax] says where a line
// stops being JSON; [Kind] names a value's kind as a person would ("an
// array", "a number"); [Clip] shortens a value an error quotes to the
// columns a terminal gives it.
package jsonlines
