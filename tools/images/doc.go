// Package images makes the pictures a user or a tool hands the model fit
// what models take: PNG, JPEG, GIF or WebP, within a size, decoded once
// and, only when they are too big, scaled down and encoded again.
//
// It is the only importer of golang.org/x/image. An image that already fits
// is kept byte for byte: what the model reads of it never depends on an
// encoder's version, so a session's requests stay byte-stable.
package images
