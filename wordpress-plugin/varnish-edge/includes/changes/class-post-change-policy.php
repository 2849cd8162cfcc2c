<?php
/**
 * The post rules: what a change of a post invalidates.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Turns a post's snapshot before and after a request into the invalidation it needs. Pure: it
 * reads only its arguments and asks the site what it needs through `Post_Facts`, so the rules
 * can be read, and tested, on their own. Conservative: any save of a published post invalidates
 * its own pages and URL whatever the diff says (a field the snapshot does not hold may have
 * changed); the diff only decides how far it spreads.
 */
class Post_Change_Policy {

	/**
	 * Post types that never render on their own and are handled elsewhere or ignored.
	 */
	const IGNORED_TYPES = array( 'revision', 'attachment', 'customize_changeset', 'oembed_cache', 'user_request', 'wp_font_face', 'wp_font_family' );

	/**
	 * Post types whose change affects every page that renders navigation menus.
	 */
	const MENU_TYPES = array( 'nav_menu_item', 'wp_navigation' );

	/**
	 * Post types that change the rendering of the whole site.
	 */
	const SITE_TYPES = array( 'wp_template', 'wp_template_part', 'wp_global_styles', 'custom_css' );

	/**
	 * Fields compared between snapshots.
	 */
	const FIELDS = array( 'modified', 'status', 'name', 'title', 'content', 'excerpt', 'date', 'author', 'parent', 'menu_order', 'terms', 'sticky', 'template', 'thumbnail', 'password', 'comment_status', 'url' );

	/**
	 * Fields whose change moves the post within, into or out of listings that show its text.
	 */
	const LISTED_FIELDS = array( 'title', 'content', 'excerpt', 'thumbnail', 'date', 'password', 'name', 'parent', 'comment_status' );

	/**
	 * Fields shown where the post is only linked by its title.
	 */
	const LINKED_FIELDS = array( 'title', 'name', 'date', 'parent', 'password' );

	/** @var Key_Scheme */
	private $scheme;

	/** @var Post_Facts */
	private $facts;

	/**
	 * Constructor.
	 *
	 * @param Key_Scheme $scheme Key scheme of the site.
	 * @param Post_Facts $facts  What the rules ask about the site.
	 */
	public function __construct( Key_Scheme $scheme, Post_Facts $facts ) {
		$this->scheme = $scheme;
		$this->facts  = $facts;
	}

	/**
	 * What a change of any post invalidates, by type: viewable types by the post rules below,
	 * menu items the menus, templates and styles the whole site, a reusable block the pages
	 * rendering it; a snapshot that did not change, nothing.
	 *
	 * @param int                      $id     Post id.
	 * @param string                   $type   Post type.
	 * @param array<string,mixed>|null $before Snapshot before (null: did not exist).
	 * @param array<string,mixed>|null $after  Snapshot after (null: deleted).
	 */
	public function post_changed( int $id, string $type, ?array $before, ?array $after ): Invalidation {
		$inv = new Invalidation();
		if ( '' === $type || in_array( $type, self::IGNORED_TYPES, true ) ) {
			return $inv;
		}
		if ( $this->facts->is_viewable( $type ) && ! in_array( $type, self::MENU_TYPES, true ) ) {
			return $this->invalidation( $before, $after );
		}
		if ( null !== $before && null !== $after && ! self::changed_fields( $before, $after ) ) {
			return $inv;
		}
		if ( in_array( $type, self::MENU_TYPES, true ) ) {
			// Every page shows the menus: its most visited pages are re-fetched at once.
			return $inv->tags( array( $this->scheme->listing( 'menus' ) ), true )->refresh_site()->reason( sprintf( 'menu item %d changed', $id ) );
		}
		if ( in_array( $type, self::SITE_TYPES, true ) ) {
			return $inv->everything()->reason( sprintf( '%s %d changed', $type, $id ) );
		}
		if ( 'wp_block' === $type ) {
			// Pages rendering the block carry its embed key (Render_Keys::on_render_block).
			return $inv->tags( array( $this->scheme->embedded( $id ), $this->scheme->rest_post( $id ) ) )->reason( sprintf( 'reusable block %d changed', $id ) );
		}
		return $inv;
	}

	/**
	 * The post rules: what a change from $before to $after invalidates.
	 *
	 * @param array<string,mixed>|null $before Snapshot before (null: did not exist).
	 * @param array<string,mixed>|null $after  Snapshot after (null: deleted).
	 */
	public function invalidation( ?array $before, ?array $after ): Invalidation {
		$was = null !== $before && $this->is_public( $before );
		$is  = null !== $after && $this->is_public( $after );
		$inv = new Invalidation();
		if ( ! $was && ! $is ) {
			return $inv;
		}
		if ( ! $was || ! $is || ( $before['modified'] ?? null ) !== ( $after['modified'] ?? null ) ) {
			// An empty feed prints the time a public post was last modified (Query_Keys).
			$inv->tags( array( $this->scheme->listing( 'lastmod' ) ), true );
		}
		if ( $was && $is ) {
			return $this->updated( $inv, $before, $after );
		}
		return $is ? $this->published( $inv, $after ) : $this->unpublished( $inv, $before, $after );
	}

	/**
	 * A public post saved and still public.
	 *
	 * @param Invalidation        $inv    Invalidation to add to.
	 * @param array<string,mixed> $before Snapshot before.
	 * @param array<string,mixed> $after  Snapshot after.
	 */
	private function updated( Invalidation $inv, array $before, array $after ): Invalidation {
		$s       = $this->scheme;
		$id      = (int) $after['id'];
		$type    = (string) $after['type'];
		$changed = array_values( array_diff( self::changed_fields( $before, $after ), array( 'modified' ) ) );
		// Whatever the diff says, the post's own pages and URL are invalidated: meta, blocks
		// rendered from other data, or fields the snapshot does not hold may have changed.
		$inv->tags( array( $s->post( $id ), $s->rest_post( $id ) ) )->urls( array( $after['url'] ) )->tags( array( $s->post_feed( $id ) ), true );
		if ( ! $changed ) {
			// The diff sees nothing visible (e.g. the block editor's second save): it spreads
			// no further than the post itself and feeds (they print the modified time).
			return $inv->refresh( array( $after['url'] ) )->reason( sprintf( 'post %d saved', $id ) );
		}
		$inv->reason( sprintf( 'post %d updated (%s)', $id, implode( ', ', $changed ) ) );
		$has = static function ( array $fields ) use ( $changed ): bool {
			return (bool) array_intersect( $fields, $changed );
		};
		// A removal (text taken out, a password set, the featured image replaced) must not be
		// served once more from grace, anywhere: listings and feeds are hard-purged too.
		$removal = self::is_removal( $before, $after, $changed );
		$spread  = ! $removal; // Soft unless something was removed.
		// REST collections filtered or ordered by content may gain, lose or reorder it.
		$inv->tags( array( $s->rest_query( $this->facts->type_base( $type ) ) ), $spread );
		if ( $removal ) {
			$inv->reason( sprintf( 'post %d: content removed', $id ) )->tags( array( $s->post_feed( $id ) ) );
		}
		if ( $has( self::LISTED_FIELDS ) ) {
			$inv->tags( array( $s->post_listed( $id ) ), $spread );
		}
		if ( $has( array( 'author' ) ) ) {
			$inv->tags( array( $s->post_author( $id ) ), true );
		}
		if ( $has( array( 'terms' ) ) ) {
			$inv->tags( array( $s->post_terms( $id ) ), true );
		}
		if ( $has( self::LINKED_FIELDS ) ) {
			$inv->tags( array( $s->post_linked( $id ) ), $spread );
		}
		if ( $before['url'] !== $after['url'] && '' !== $before['url'] ) {
			$inv->urls( array( $before['url'] ) )->tags( array( $s->listing( 'sitemaps' ) ), true );
			if ( $this->facts->is_hierarchical( $type ) ) {
				$inv->prefixes( array( $before['url'] ) ); // Child pages lived under the old URL.
			}
		}
		if ( $has( array( 'title', 'content', 'excerpt' ) ) ) {
			$inv->tags( array( $s->listing( 'search' ) ), $spread );
		}
		if ( $has( array( 'terms' ) ) ) {
			$this->terms_changed( $inv, $before['terms'], $after['terms'] );
		}
		if ( $has( array( 'author' ) ) ) {
			$inv->tags( array( $s->author_listing( (int) $before['author'] ), $s->author_listing( (int) $after['author'] ) ), true );
		}
		if ( $has( array( 'date' ) ) ) {
			// Position in every listing and the date archives change.
			$inv->tags( array_merge( $this->listing_keys( $before ), $this->listing_keys( $after ), $this->neighbor_keys( $before ), $this->neighbor_keys( $after ) ), true );
		}
		if ( $has( array( 'sticky' ) ) && $this->facts->is_listed( $type ) ) {
			$inv->tags( array( $s->listing( 'home' ), $s->rest_collection( $this->facts->type_base( $type ) ) ), true );
		}
		if ( 'page' === $type && $has( array( 'title', 'name', 'parent', 'menu_order' ) ) ) {
			$inv->tags( array( $s->listing( 'pages' ) ), true );
		}
		return $this->refresh_pages( $inv, (string) $after['url'], $before, $after );
	}

	/**
	 * The post left the archives of removed terms (hard: it must not show there again) and
	 * entered the others (soft); the terms listed for it in REST changed. The terms' counts
	 * are `Term_Count_Policy`'s (from the recount itself).
	 *
	 * @param Invalidation        $inv    Invalidation to add to.
	 * @param array<string,int[]> $before Term ids per taxonomy before.
	 * @param array<string,int[]> $after  Term ids per taxonomy after.
	 */
	private function terms_changed( Invalidation $inv, array $before, array $after ): void {
		$s = $this->scheme;
		foreach ( array_unique( array_merge( array_keys( $before ), array_keys( $after ) ) ) as $tax ) {
			$old = $before[ $tax ] ?? array();
			$new = $after[ $tax ] ?? array();
			foreach ( array( array( array_diff( $old, $new ), false ), array( array_diff( $new, $old ), true ) ) as list( $term_ids, $soft ) ) {
				foreach ( $term_ids as $term_id ) {
					$inv->tags( array( $s->term_listing( (int) $term_id ) ), $soft );
				}
			}
			$inv->tags( array( $s->rest_query( $this->facts->taxonomy_base( (string) $tax ) ) ), true ); // Its terms filtered by post.
		}
	}

	/**
	 * Published (new, from draft, or a scheduled post going live).
	 *
	 * @param Invalidation        $inv   Invalidation to add to.
	 * @param array<string,mixed> $after Snapshot after.
	 */
	private function published( Invalidation $inv, array $after ): Invalidation {
		$id = (int) $after['id'];
		$inv->reason( sprintf( 'post %d published', $id ) );
		$inv->tags( array( $this->scheme->post( $id ), $this->scheme->rest_post( $id ) ) )->urls( array( $after['url'] ) ); // Drops a 404 cached at the new URL.
		$inv->tags( array_merge( $this->listing_keys( $after ), $this->neighbor_keys( $after ) ), true );
		return $this->refresh_pages( $inv, (string) $after['url'], $after );
	}

	/**
	 * Unpublished, trashed or deleted: every page that shows it, and the URL it had.
	 *
	 * @param Invalidation             $inv    Invalidation to add to.
	 * @param array<string,mixed>      $before Snapshot before.
	 * @param array<string,mixed>|null $after  Snapshot after (null: deleted).
	 */
	private function unpublished( Invalidation $inv, array $before, ?array $after ): Invalidation {
		$s  = $this->scheme;
		$id = (int) $before['id'];
		$inv->reason( sprintf( 'post %d %s', $id, null === $after ? 'deleted' : ( 'trash' === $after['status'] ? 'trashed' : 'unpublished' ) ) );
		$inv->tags( array( $s->post( $id ), $s->rest_post( $id ), $s->post_listed( $id ), $s->post_linked( $id ), $s->post_feed( $id ), $s->post_author( $id ), $s->post_terms( $id ), $s->comments( $id ) ) );
		$inv->urls( array( $before['url'] ) );
		$inv->tags( array_merge( $this->listing_keys( $before ), $this->neighbor_keys( $before ) ) );
		return $this->refresh_pages( $inv, '', $before ); // Its own URL must 404 now, not be cached again.
	}

	/**
	 * The pages each edge node re-fetches once the invalidation is applied, most read first: the
	 * post's own page (while it is public), the front pages, the first page of each archive of
	 * its terms, the main feed (for types it lists), the pages of the posts before and after it
	 * (their previous/next links show it).
	 *
	 * @param Invalidation        $inv       Invalidation to add to.
	 * @param string              $own       The post's URL ('' when it is no longer public).
	 * @param array<string,mixed> ...$states Snapshots whose archives changed (before and after).
	 */
	private function refresh_pages( Invalidation $inv, string $own, array ...$states ): Invalidation {
		$urls = array_merge( array( $own ), $this->facts->front_urls() );
		$feed = false;
		foreach ( $states as $state ) {
			foreach ( (array) $state['terms'] as $tax => $ids ) {
				foreach ( (array) $ids as $term_id ) {
					$urls[] = $this->facts->term_url( (int) $term_id, (string) $tax );
				}
			}
			$feed = $feed || $this->facts->is_listed( (string) $state['type'] );
		}
		if ( $feed ) {
			$urls[] = $this->facts->feed_url();
		}
		foreach ( $states as $state ) {
			foreach ( $this->facts->neighbors( $state ) as $neighbor ) {
				$urls[] = $this->facts->post_url( $neighbor );
			}
		}
		return $inv->refresh( $urls );
	}

	/**
	 * Fields that differ between two snapshots.
	 *
	 * @param array<string,mixed> $before Before.
	 * @param array<string,mixed> $after  After.
	 * @return string[]
	 */
	public static function changed_fields( array $before, array $after ): array {
		$changed = array();
		foreach ( self::FIELDS as $field ) {
			if ( ( $before[ $field ] ?? null ) !== ( $after[ $field ] ?? null ) ) {
				$changed[] = $field;
			}
		}
		return $changed;
	}

	/**
	 * Whether an update removed something visitors could see: a word of the title, content or
	 * excerpt that is gone (an edited word counts as removed), a password set or changed, a
	 * featured image replaced or removed.
	 *
	 * @param array<string,mixed> $before  Before.
	 * @param array<string,mixed> $after   After.
	 * @param string[]            $changed Changed fields.
	 */
	public static function is_removal( array $before, array $after, array $changed ): bool {
		if ( in_array( 'password', $changed, true ) && md5( '' ) !== $after['password'] ) {
			return true;
		}
		if ( in_array( 'thumbnail', $changed, true ) && $before['thumbnail'] ) {
			return true;
		}
		foreach ( (array) ( $before['texts'] ?? array() ) as $i => $old ) {
			$new = (string) ( $after['texts'][ $i ] ?? '' );
			if ( $old === $new ) {
				continue;
			}
			$left = array_count_values( self::tokens( $new ) );
			foreach ( array_count_values( self::tokens( (string) $old ) ) as $token => $count ) {
				if ( ( $left[ $token ] ?? 0 ) < $count ) {
					return true;
				}
			}
		}
		return false;
	}

	/**
	 * Words and markup pieces of a text.
	 *
	 * @return string[]
	 */
	private static function tokens( string $text ): array {
		return array_map( 'strval', (array) preg_split( '/[\s<>"\'=\/]+/u', $text, -1, PREG_SPLIT_NO_EMPTY ) );
	}

	/**
	 * Whether a snapshot is visible to anonymous visitors.
	 *
	 * @param array<string,mixed> $state Snapshot.
	 */
	private function is_public( array $state ): bool {
		return 'publish' === $state['status'] && ! in_array( $state['type'], self::IGNORED_TYPES, true ) && $this->facts->is_viewable( (string) $state['type'] );
	}

	/**
	 * The REST users list shows the authors of public posts, and a user's REST item answers
	 * anonymous readers only while they have one: what a request's post changes do to that. An
	 * author whose public posts went from none to some joined the list (soft); one whose went to
	 * none left it and their item is gone (hard). Decided once per request from all its changes
	 * (a bulk action moves hundreds of posts at once): the count before is the count now less
	 * what the changes added.
	 *
	 * @param array<int,array{0:array<string,mixed>|null,1:array<string,mixed>|null}> $changes Snapshots before and after, per post.
	 */
	public function authors_changed( array $changes ): Invalidation {
		$delta = array();
		foreach ( $changes as list( $before, $after ) ) {
			if ( null !== $before && $this->is_public( $before ) ) {
				$delta[ (int) $before['author'] ] = ( $delta[ (int) $before['author'] ] ?? 0 ) - 1;
			}
			if ( null !== $after && $this->is_public( $after ) ) {
				$delta[ (int) $after['author'] ] = ( $delta[ (int) $after['author'] ] ?? 0 ) + 1;
			}
		}
		$inv = new Invalidation();
		foreach ( $delta as $author => $added ) {
			if ( $author <= 0 || 0 === $added ) {
				continue;
			}
			$now = $this->facts->public_post_count( $author );
			$was = $now - $added;
			if ( ( $was > 0 ) === ( $now > 0 ) ) {
				continue;
			}
			if ( $now > 0 ) {
				$inv->tags( array( $this->scheme->rest_collection( 'users' ) ), true );
			} else {
				$inv->reason( sprintf( 'user %d has no public post left', $author ) );
				$inv->tags( array( $this->scheme->rest_collection( 'users' ), $this->scheme->rest_user( $author ) ) );
			}
		}
		return $inv;
	}

	/**
	 * Keys of every listing a post in this state belongs to.
	 *
	 * @param array<string,mixed> $state Snapshot.
	 * @return string[]
	 */
	public function listing_keys( array $state ): array {
		$s    = $this->scheme;
		$type = (string) $state['type'];
		$keys = array_merge( array( $s->listing( 'search' ), $s->listing( 'sitemaps' ) ), $s->rest_lists( $this->facts->type_base( $type ) ) );
		// Term counts: Term_Count_Policy.
		foreach ( $state['terms'] as $ids ) {
			foreach ( $ids as $term_id ) {
				$keys[] = $s->term_listing( (int) $term_id );
			}
		}
		// The type's archive and every query loop listing the type (Render_Keys), archive or not.
		$keys[] = $s->post_type_archive( $type );
		if ( $this->facts->is_listed( $type ) ) {
			$time   = (int) strtotime( (string) $state['date'] );
			$keys[] = $s->listing( 'home' );
			$keys[] = $s->author_listing( (int) $state['author'] );
			$keys[] = $s->date( gmdate( 'Y', $time ) );
			$keys[] = $s->date( gmdate( 'Ym', $time ) );
			$keys[] = $s->date( gmdate( 'Ymd', $time ) );
		}
		if ( 'page' === $type ) {
			$keys[] = $s->listing( 'pages' );
		}
		return $keys;
	}

	/**
	 * Neighbour-link keys of the published posts just before and after this one (pages that
	 * show previous/next links to it).
	 *
	 * @param array<string,mixed> $state Snapshot.
	 * @return string[]
	 */
	private function neighbor_keys( array $state ): array {
		return array_map( array( $this->scheme, 'neighbors' ), $this->facts->neighbors( $state ) );
	}
}
