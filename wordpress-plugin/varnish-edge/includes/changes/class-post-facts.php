<?php
/**
 * What the post rules need to know about the site.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * The questions `Post_Change_Policy` asks about the site, so that the rules themselves make no
 * WordPress call: the live site answers them (`Live_Post_Facts`), a test answers from a table.
 */
interface Post_Facts {

	/**
	 * Whether posts of a type have public pages.
	 */
	public function is_viewable( string $type ): bool;

	/**
	 * Whether a post type is hierarchical (child pages live under their parent's URL).
	 */
	public function is_hierarchical( string $type ): bool;

	/**
	 * Whether a post type is shown in the home, author and date listings.
	 */
	public function is_listed( string $type ): bool;

	/**
	 * The `wp/v2` route base of a post type.
	 */
	public function type_base( string $type ): string;

	/**
	 * The `wp/v2` route base of a taxonomy.
	 */
	public function taxonomy_base( string $taxonomy ): string;

	/**
	 * Ids of the published posts just before and just after a post in this state (the pages
	 * that link to it as previous/next).
	 *
	 * @param array<string,mixed> $state Post snapshot.
	 * @return int[]
	 */
	public function neighbors( array $state ): array;

	/**
	 * How many public posts (of the types the REST API shows) the user is the author of.
	 */
	public function public_post_count( int $author ): int;

	/**
	 * The site's front pages: the home page, then the posts page when the front is a static page.
	 *
	 * @return string[]
	 */
	public function front_urls(): array;

	/**
	 * The first page of a term's archive ('' when it has none).
	 */
	public function term_url( int $term_id, string $taxonomy ): string;

	/**
	 * A published post's own page ('' when it has none).
	 */
	public function post_url( int $id ): string;

	/**
	 * The main feed.
	 */
	public function feed_url(): string;
}
