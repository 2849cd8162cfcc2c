<?php
/**
 * What a post looks like to the post rules.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Reads everything about a post that decides what pages show it, and how: the snapshot that
 * `Post_Change_Policy` compares (fields named in its `FIELDS`, plus the raw texts).
 */
class Post_Snapshot {

	/**
	 * The snapshot of a post as it is now.
	 *
	 * @param \WP_Post            $post      Post.
	 * @param array<string,mixed> $overrides Fields known to differ from the row (e.g. the status
	 *                                       it had before a transition).
	 * @return array<string,mixed>
	 */
	public static function of( \WP_Post $post, array $overrides = array() ): array {
		$terms = array();
		foreach ( get_object_taxonomies( $post->post_type, 'objects' ) as $taxonomy ) {
			if ( ! $taxonomy->public && ! $taxonomy->publicly_queryable ) {
				continue;
			}
			$ids = wp_get_object_terms( $post->ID, $taxonomy->name, array( 'fields' => 'ids', 'update_term_meta_cache' => false ) );
			$ids = is_wp_error( $ids ) ? array() : array_map( 'intval', $ids );
			sort( $ids );
			$terms[ $taxonomy->name ] = $ids;
		}
		$state = array(
			'id'             => (int) $post->ID,
			'type'           => $post->post_type,
			'status'         => $post->post_status,
			'name'           => $post->post_name,
			'title'          => $post->post_title,
			'content'        => md5( (string) $post->post_content ),
			'excerpt'        => md5( (string) $post->post_excerpt ),
			'date'           => $post->post_date,
			'author'         => (int) $post->post_author,
			'parent'         => (int) $post->post_parent,
			'menu_order'     => (int) $post->menu_order,
			'terms'          => $terms,
			'sticky'         => is_sticky( $post->ID ),
			'template'       => (string) get_post_meta( $post->ID, '_wp_page_template', true ),
			'thumbnail'      => (int) get_post_meta( $post->ID, '_thumbnail_id', true ),
			'password'       => md5( (string) $post->post_password ),
			'comment_status' => $post->comment_status,
			'modified'       => $post->post_modified_gmt,
			// Raw text, not compared (the md5s are): tells a removal from an addition.
			'texts'          => array( (string) $post->post_title, (string) $post->post_content, (string) $post->post_excerpt ),
		);
		$state        = array_merge( $state, $overrides );
		$state['url'] = self::public_url( $post, $state );
		return $state;
	}

	/**
	 * The URL the post has (or had) while published — never the `?p=N` form an unpublished
	 * post gets from get_permalink().
	 *
	 * @param \WP_Post            $post  Post.
	 * @param array<string,mixed> $state Snapshot fields (name, date and parent it had).
	 */
	public static function public_url( \WP_Post $post, array $state ): string {
		if ( ! is_post_type_viewable( $post->post_type ) || in_array( $post->post_type, Post_Change_Policy::IGNORED_TYPES, true ) ) {
			return '';
		}
		$clone              = clone $post;
		$clone->post_status = 'publish';
		$clone->post_name   = (string) preg_replace( '/__trashed(-[0-9]+)?$/', '', (string) $state['name'] );
		$clone->post_date   = $state['date'];
		$clone->post_parent = $state['parent'];
		if ( '' === $clone->post_name && (bool) get_option( 'permalink_structure' ) ) {
			return '';
		}
		$url = get_permalink( $clone );
		return is_string( $url ) ? $url : '';
	}
}
