<?php
/**
 * The pages edge nodes re-fetch after a batch.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Resolves a batch's refresh list: the pages the handlers named, then, for a site-wide change,
 * the pages readers reach from everywhere (home, the menus' and navigations' links, the newest
 * posts and pages), through the `varnish_edge_refresh_urls` filter. Each node re-fetches them
 * right after applying the batch when readers asked for them lately, so nobody waits on the
 * origin because of an edit.
 */
class Refresh_Urls {

	/**
	 * Newest posts and pages named after a site-wide change (before the cap of the event).
	 */
	const NEWEST_POSTS = 30;
	const NEWEST_PAGES = 20;

	/**
	 * Navigation posts read for their links (each is parsed).
	 */
	const NAVIGATIONS = 5;

	/**
	 * Replace the invalidation's refresh list by the final one (filtered, site-wide pages added).
	 */
	public static function resolve( Invalidation $inv ): void {
		$urls = array_keys( $inv->refresh );
		if ( $inv->all || $inv->refresh_site ) {
			$urls = array_merge( $urls, self::site_wide() );
		}
		/**
		 * The pages each edge node re-fetches after applying a batch, most important first (at
		 * most 50 are sent; URLs of other hosts are dropped, and this site's URLs outside the
		 * protocol's URL grammar, with a line in the PHP error log: Url_Grammar). A node fetches
		 * only pages readers requested in the last minute.
		 *
		 * @param string[]     $urls Absolute URLs.
		 * @param Invalidation $inv  What the batch invalidates.
		 */
		$urls         = apply_filters( 'varnish_edge_refresh_urls', $urls, $inv );
		$inv->refresh = array();
		$inv->refresh( array_values( array_filter( (array) $urls, 'is_string' ) ) );
	}

	/**
	 * Pages readers reach from every page: the front pages, the links of the menus in theme
	 * locations and of the newest navigation blocks, the newest posts, the newest pages.
	 *
	 * @return string[]
	 */
	public static function site_wide(): array {
		$urls = array_merge(
			( new Live_Post_Facts() )->front_urls(),
			self::menu_urls(),
			self::navigation_urls(),
			self::newest( 'post', self::NEWEST_POSTS ),
			self::newest( 'page', self::NEWEST_PAGES )
		);
		return array_values( array_unique( array_filter( array_map( array( self::class, 'absolute' ), $urls ) ) ) );
	}

	/**
	 * Links of the classic menus assigned to theme locations.
	 *
	 * @return string[]
	 */
	private static function menu_urls(): array {
		$urls = array();
		foreach ( array_unique( array_map( 'intval', (array) get_nav_menu_locations() ) ) as $menu_id ) {
			foreach ( (array) wp_get_nav_menu_items( $menu_id ) as $item ) {
				if ( is_object( $item ) && isset( $item->url ) ) {
					$urls[] = (string) $item->url;
				}
			}
		}
		return $urls;
	}

	/**
	 * Links of the newest published navigation blocks (`wp_navigation` posts).
	 *
	 * @return string[]
	 */
	private static function navigation_urls(): array {
		if ( ! post_type_exists( 'wp_navigation' ) ) {
			return array();
		}
		$urls  = array();
		$posts = get_posts(
			array(
				'post_type'        => 'wp_navigation',
				'post_status'      => 'publish',
				'numberposts'      => self::NAVIGATIONS,
				'orderby'          => 'modified',
				'order'            => 'DESC',
				'no_found_rows'    => true,
				'suppress_filters' => true,
			)
		);
		foreach ( $posts as $post ) {
			self::block_links( parse_blocks( (string) $post->post_content ), $urls );
		}
		return $urls;
	}

	/**
	 * Collect the `url` of navigation links and submenus, nested ones included.
	 *
	 * @param array<int,array<string,mixed>> $blocks Parsed blocks.
	 * @param string[]                       $urls   Links found so far.
	 */
	private static function block_links( array $blocks, array &$urls ): void {
		foreach ( $blocks as $block ) {
			if ( in_array( $block['blockName'] ?? '', array( 'core/navigation-link', 'core/navigation-submenu' ), true ) && is_string( $block['attrs']['url'] ?? null ) ) {
				$urls[] = $block['attrs']['url'];
			}
			if ( 'core/home-link' === ( $block['blockName'] ?? '' ) ) {
				$urls[] = home_url( '/' );
			}
			self::block_links( (array) ( $block['innerBlocks'] ?? array() ), $urls );
		}
	}

	/**
	 * Permalinks of the newest published posts of a type.
	 *
	 * @return string[]
	 */
	private static function newest( string $type, int $count ): array {
		if ( ! is_post_type_viewable( $type ) ) {
			return array();
		}
		$ids = get_posts(
			array(
				'post_type'        => $type,
				'post_status'      => 'publish',
				'numberposts'      => $count,
				'orderby'          => 'date',
				'order'            => 'DESC',
				'fields'           => 'ids',
				'no_found_rows'    => true,
				'suppress_filters' => true,
			)
		);
		return array_map( 'strval', array_filter( array_map( 'get_permalink', $ids ) ) );
	}

	/**
	 * A menu link as an absolute URL: host-relative links (`/about/`) get the home's origin;
	 * anything else is kept as written (links to other hosts are dropped when events are built).
	 */
	private static function absolute( string $url ): string {
		$url = trim( $url );
		if ( '' === $url || '#' === $url[0] ) {
			return '';
		}
		if ( '/' === $url[0] && '/' !== ( $url[1] ?? '' ) ) {
			$origin = (string) preg_replace( '~^(https?://[^/?#]+).*$~i', '$1', home_url() );
			return $origin . $url;
		}
		return $url;
	}
}
