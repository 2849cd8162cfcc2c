<?php
/**
 * REST route bases of post types and taxonomies.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * The `wp/v2` base a post type or taxonomy is served under (`posts`, `media`, `categories`,
 * a custom `rest_base`), and back: the one place both directions are read.
 */
final class Rest_Bases {

	/**
	 * REST base of a post type (its name when it sets none).
	 *
	 * @param string $type Post type.
	 */
	public static function of_type( string $type ): string {
		$object = get_post_type_object( $type );
		return ( $object && is_string( $object->rest_base ) && '' !== $object->rest_base ) ? $object->rest_base : $type;
	}

	/**
	 * REST base of a taxonomy (its name when it sets none).
	 */
	public static function of_taxonomy( string $taxonomy ): string {
		$object = get_taxonomy( $taxonomy );
		return ( $object && is_string( $object->rest_base ) && '' !== $object->rest_base ) ? $object->rest_base : $taxonomy;
	}

	/**
	 * The post type served under a REST base, if any shows in REST.
	 *
	 * @param string $base REST base.
	 */
	public static function type_of( string $base ): ?string {
		foreach ( get_post_types( array( 'show_in_rest' => true ) ) as $type ) {
			if ( self::of_type( $type ) === $base ) {
				return $type;
			}
		}
		return null;
	}

	/**
	 * The taxonomy served under a REST base, if any shows in REST.
	 *
	 * @param string $base REST base.
	 */
	public static function taxonomy_of( string $base ): ?string {
		foreach ( get_taxonomies( array( 'show_in_rest' => true ) ) as $taxonomy ) {
			if ( self::of_taxonomy( $taxonomy ) === $base ) {
				return $taxonomy;
			}
		}
		return null;
	}
}
