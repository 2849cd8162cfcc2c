<?php
/**
 * The files of an attachment.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Public URLs of the files WordPress keeps for an attachment, read from its metadata: the files
 * `wp_delete_attachment_files()` removes, addressed the way `wp_get_attachment_image_src()` does
 * (next to the main file).
 */
class Attachment_Files {

	/**
	 * URLs of an attachment's files: its current file (`wp_get_attachment_url()`) and, from the
	 * given metadata, the main file, every intermediate size, the original of a scaled-down big
	 * image (`original_image`, WordPress 5.3+), the legacy `thumb` and the image editor's backups.
	 *
	 * @param mixed $meta         Attachment metadata (`_wp_attachment_metadata`); anything is accepted.
	 * @param mixed $backup_sizes Image editor backups (`_wp_attachment_backup_sizes`); anything is accepted.
	 * @return string[] Absolute URLs, without duplicates.
	 */
	public static function urls( int $attachment_id, mixed $meta, mixed $backup_sizes = array() ): array {
		if ( $attachment_id <= 0 ) {
			return array();
		}
		$meta    = is_array( $meta ) ? $meta : array();
		$current = wp_get_attachment_url( $attachment_id );
		$current = is_string( $current ) ? $current : '';
		$main    = self::main_url( $meta, $current );
		$urls    = array( $current, $main );
		$slash   = strrpos( $main, '/' );
		if ( false === $slash ) {
			return array_values( array_unique( array_filter( $urls, 'strlen' ) ) );
		}

		// Sizes, the scaled-down original and backups live next to the main file.
		$dir   = substr( $main, 0, $slash + 1 );
		$names = array( $meta['original_image'] ?? null, $meta['thumb'] ?? null );
		foreach ( array( $meta['sizes'] ?? null, $backup_sizes ) as $list ) {
			if ( is_array( $list ) ) {
				foreach ( $list as $size ) {
					$names[] = is_array( $size ) ? ( $size['file'] ?? null ) : null;
				}
			}
		}
		foreach ( $names as $name ) {
			$name = self::file_name( $name );
			if ( '' !== $name ) {
				$urls[] = $dir . $name;
			}
		}
		return array_values( array_unique( array_filter( $urls, 'strlen' ) ) );
	}

	/**
	 * URL of the main file the metadata names (`file`, relative to the uploads directory): after an
	 * image edit it differs from the current file. Without a usable `file` (documents, odd data),
	 * the current file.
	 *
	 * @param array  $meta    Metadata.
	 * @param string $current Current file URL.
	 */
	private static function main_url( array $meta, string $current ): string {
		$file    = ( isset( $meta['file'] ) && is_string( $meta['file'] ) ) ? wp_normalize_path( $meta['file'] ) : '';
		$uploads = wp_get_upload_dir();
		if ( '' === $file || ! empty( $uploads['error'] ) || empty( $uploads['basedir'] ) || empty( $uploads['baseurl'] ) ) {
			return $current;
		}
		$base = trailingslashit( wp_normalize_path( $uploads['basedir'] ) );
		if ( 0 === strpos( $file, $base ) ) {
			$file = substr( $file, strlen( $base ) );
		}
		// Only a plain relative path inside the uploads directory: no absolute path, scheme, drive
		// letter or dot segment.
		if ( '' === $file || preg_match( '#^/|^[a-z][a-z0-9+.-]*:|(^|/)\.\.?(/|$)#i', $file ) ) {
			return $current;
		}
		return untrailingslashit( $uploads['baseurl'] ) . '/' . $file;
	}

	/**
	 * A file name from metadata, without any directory part; '' when unusable.
	 */
	private static function file_name( mixed $name ): string {
		if ( ! is_string( $name ) ) {
			return '';
		}
		$name = wp_basename( wp_normalize_path( $name ) );
		return ( '.' === $name || '..' === $name ) ? '' : $name;
	}
}
